package bootstrap

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/wincluster/terraform-provider-windows/internal/psquote"
)

// RegistryHostsDir is containerd's registry config_path on the image: one
// directory per upstream registry, each with a hosts.toml (containerd
// docs/hosts.md, "Specifying the Configuration Directory"; its Windows
// default would be C:\Program Files\containerd\certs.d too, beside
// config.toml).
const RegistryHostsDir = `C:\Program Files\containerd\certs.d`

// RegistryMirror sends the pulls of one upstream registry to mirrors first.
type RegistryMirror struct {
	// Registry is the upstream registry host namespace the images name
	// ("registry.k8s.io", "mcr.microsoft.com", "myregistry.io:5000"), or
	// "_default" for every registry without a directory of its own.
	Registry string
	// Endpoints are the mirrors, tried in order (hosts.toml [host."<url>"]
	// tables, capabilities pull and resolve).
	Endpoints []string
	// Server is where containerd goes after every mirror refused; ""
	// leaves containerd's default, the upstream registry itself
	// (core/remotes/docker/config/hosts.go, ConfigureHosts: the root
	// host is always tried last).
	Server string
}

// RegistryCredential is the user and password containerd sends to one
// mirror host.
type RegistryCredential struct {
	Host     string // a mirror's host[:port], as in its endpoint URL
	Username string
	Password string
}

// Registry is the image's registry configuration.
type Registry struct {
	Mirrors     []RegistryMirror
	Credentials []RegistryCredential
}

// Empty reports whether there is nothing to configure.
func (r Registry) Empty() bool { return len(r.Mirrors) == 0 && len(r.Credentials) == 0 }

// Validate reports the first problem, naming the attribute.
func (r Registry) Validate() error {
	hosts := map[string]bool{}
	for _, m := range r.Mirrors {
		if err := validRegistryHost(m.Registry); err != nil && m.Registry != "_default" {
			return fmt.Errorf("registry_mirrors: %q is not a registry host (host[:port], as an image reference names it, or _default): %v", m.Registry, err)
		}
		if len(m.Endpoints) == 0 {
			return fmt.Errorf("registry_mirrors[%q].endpoints: list at least one mirror URL", m.Registry)
		}
		for _, e := range append(append([]string{}, m.Endpoints...), m.Server) {
			if e == "" {
				continue
			}
			u, err := url.Parse(e)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
				return fmt.Errorf("registry_mirrors[%q]: %q is not an http(s) URL without credentials, query or fragment (give credentials in registry_credentials_wo)", m.Registry, e)
			}
			hosts[u.Host] = true
		}
	}
	for _, c := range r.Credentials {
		if err := validRegistryHost(c.Host); err != nil {
			return fmt.Errorf("registry_credentials_wo: %q is not a mirror host[:port]: %v", c.Host, err)
		}
		if !hosts[c.Host] && len(r.Mirrors) > 0 {
			return fmt.Errorf("registry_credentials_wo: %q is no host of registry_mirrors' endpoints or servers; containerd sends a credential to the host it names only", c.Host)
		}
		if c.Username == "" || c.Password == "" {
			return fmt.Errorf("registry_credentials_wo[%q]: username and password are both required", c.Host)
		}
	}
	return nil
}

func validRegistryHost(h string) error {
	if h == "" {
		return errors.New("empty")
	}
	u, err := url.Parse("https://" + h)
	if err != nil || u.Host != h || strings.ContainsAny(h, `/\ "'`) {
		return errors.New("not host[:port]")
	}
	return nil
}

// RegistryHostDir is the directory of one registry namespace under
// config_path on Windows, which has no ':' in file names: host:port becomes
// host_port_ (core/remotes/docker/config/hosts.go, hostDirectory; docs/hosts.md
// "Port Handling in Registry Host", the first of the names it tries).
func RegistryHostDir(registry string) string {
	if i := strings.LastIndex(registry, ":"); i > 0 {
		registry = registry[:i] + "_" + registry[i+1:] + "_"
	}
	return RegistryHostsDir + `\` + registry
}

// HostsTOML is a mirror's hosts.toml: its endpoints in order with the pull
// and resolve capabilities, then the server containerd falls back to
// (containerd docs/hosts.md, "Setup a Local Mirror for Docker"). Every
// string is TOML-encoded, so no value adds keys of its own.
func HostsTOML(m RegistryMirror) string {
	var lines []string
	if m.Server != "" {
		lines = append(lines, "server = "+tomlString(m.Server), "")
	}
	for _, e := range m.Endpoints {
		lines = append(lines, "[host."+tomlString(e)+"]", `  capabilities = ["pull", "resolve"]`, "")
	}
	return strings.Join(lines, "\r\n")
}

// registryConfig is the CRI registry section of config.toml: config_path,
// and each mirror's credential under registry.configs."<host>".auth, the
// only place containerd 2.x reads a credential it sends by itself: hosts.toml
// has no credential field by design (core/remotes/docker/config/hosts.go,
// "TODO: Credentials"; containerd#10996, a maintainer: "Secrets will not be
// added in the host config"), and the kubelet's image pull secrets reach only
// the image's own registry, never a mirror (containerd ParseAuth compares
// the secret's server address with the host; containerd#10996, #12366, which
// kept registry.configs past 2.2 for this). The pod sandbox (pause) image is
// pulled by containerd itself, with no CRI credential at all. Deprecated
// (RELEASES.md: removal planned for v2.4); docs/cri/registry.md keeps it
// "until a suitable secret management alternative is available".
func registryConfig(reg Registry, v2 bool) []string {
	if reg.Empty() {
		return nil
	}
	section := `[plugins.'io.containerd.cri.v1.images'.registry]`
	if v2 {
		section = `  [plugins."io.containerd.grpc.v1.cri".registry]`
	}
	lines := []string{section, `  config_path = '` + RegistryHostsDir + `'`}
	creds := append([]RegistryCredential{}, reg.Credentials...)
	sort.Slice(creds, func(i, j int) bool { return creds[i].Host < creds[j].Host })
	for _, c := range creds {
		prefix := `[plugins.'io.containerd.cri.v1.images'.registry.configs.`
		if v2 {
			prefix = `  [plugins."io.containerd.grpc.v1.cri".registry.configs.`
		}
		lines = append(lines, prefix+tomlString(c.Host)+`.auth]`,
			`  username = `+tomlString(c.Username), `  password = `+tomlString(c.Password))
	}
	return lines
}

// registrySecrets are the forms the credentials take in the steps'
// scripts: each password as it is and TOML-encoded, each also inside a
// PowerShell single-quoted literal (its quotes doubled, psquote).
func registrySecrets(reg Registry) []string {
	var out []string
	add := func(s string) {
		quoted := psquote.Single(s)
		for _, f := range []string{s, quoted[1 : len(quoted)-1]} {
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	for _, c := range reg.Credentials {
		add(c.Password)
		q := tomlString(c.Password)
		add(q[1 : len(q)-1])
	}
	return out
}

// RegistryStep writes each mirror's hosts.toml and, when the image carries
// credentials, creates config.toml before containerd's step writes it, with
// a protected DACL that only LocalSystem (containerd's service account) and
// Administrators hold: the credentials containerd offers no other place for
// (registryConfig) are then never readable by other local users. Set-Content
// keeps a file's DACL when it rewrites it.
func RegistryStep(reg Registry) (Step, error) {
	type file struct{ Dir, Path, Content string }
	var files []file
	for _, m := range reg.Mirrors {
		dir := RegistryHostDir(m.Registry)
		files = append(files, file{Dir: dir, Path: dir + `\hosts.toml`, Content: HostsTOML(m)})
	}
	script, err := render("registry-hosts", "registry-hosts", map[string]any{
		"Root": RegistryHostsDir, "Files": files, "Conf": ContainerdConf, "Protect": len(reg.Credentials) > 0,
	})
	return Step{Name: "registry-hosts", Script: script}, err
}

// prepullPull is one ctr pull of the prepull step: with mirrors, through
// config_path (ctr's --hosts-dir: ctr reads no config.toml, so neither
// config_path nor registry.configs reach it) with the credential of the
// image's first mirror (ctr's --user, which it sends to any host it
// contacts: containerd cmd/ctr/commands/resolver.go), given on the command
// line so that it is never written to the guest's disk.
type prepullPull struct {
	Image, User string
	HostsDir    bool
}

func prepullData(cfg ImageConfig) map[string]any {
	var pulls []prepullPull
	for _, img := range cfg.PrepullImages {
		p := prepullPull{Image: img}
		if len(cfg.Registry.Mirrors) > 0 {
			p.HostsDir = true
			if c, ok := cfg.Registry.credentialFor(img); ok {
				p.User = c.Username + ":" + c.Password
			}
		}
		pulls = append(pulls, p)
	}
	return map[string]any{"Pulls": pulls, "Ctr": ContainerdDir + `\bin\ctr.exe`, "HostsDir": RegistryHostsDir}
}

// credentialFor is the credential of the first mirror endpoint of the
// image's registry (or of _default) that has one.
func (r Registry) credentialFor(image string) (RegistryCredential, bool) {
	host := imageHost(image)
	for _, want := range []string{host, "_default"} {
		for _, m := range r.Mirrors {
			if m.Registry != want {
				continue
			}
			for _, e := range m.Endpoints {
				u, err := url.Parse(e)
				if err != nil {
					continue
				}
				for _, c := range r.Credentials {
					if c.Host == u.Host {
						return c, true
					}
				}
			}
			return RegistryCredential{}, false
		}
	}
	return RegistryCredential{}, false
}

// imageHost is the registry host of a full reference ("docker.io" for a
// first component without a '.' or ':' and not "localhost", as
// distribution/reference normalizes it).
func imageHost(ref string) string {
	first, _, found := strings.Cut(ref, "/")
	if !found || (!strings.ContainsAny(first, ".:") && first != "localhost") {
		return "docker.io"
	}
	return first
}

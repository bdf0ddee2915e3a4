package winsim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/distribution/reference"
)

// containerd's pulls through a hosts directory (config_path and hosts.toml),
// shared by the simulated ctr (--hosts-dir) and the simulated CRI plugin
// (kubeletsim). Sources, containerd v2.3.4:
//
//   - core/remotes/docker/config/hosts.go: the host directory is
//     <dir>\<host_port_>, then <hostport>, then _default; hosts.toml's
//     [host."<url>"] tables in file order, then server (the upstream registry
//     itself when server is not set) last; capabilities pull, resolve.
//   - core/remotes/docker/resolver.go: HEAD /v2/<repository>/manifests/<tag
//     or digest>, with ?ns=<registry> to a host that is not the registry; a
//     404 tries the next host, as do a 4xx/5xx and a failed request; the most
//     advanced error is returned ("trying next host").
//   - core/remotes/docker/authorizer.go: a 401 with a Basic challenge is
//     answered with the host's credential, once.
//
// Refused as not modelled: hosts.toml's ca, client, skip_verify, header,
// override_path and dial_timeout, a host URL with a path, and a
// bearer-token challenge. The sandbox's guests reach no registry on the
// internet: a host that is not a loopback address fails its lookup, as DNS
// would without one.

// registryHost is one host of a pull, in order.
type registryHost struct {
	scheme, host  string
	pull, resolve bool
}

// loadHosts is ConfigureHosts for one registry: its hosts.toml's hosts, then
// the server.
func loadHosts(files func(string) ([]byte, error), configPath, registry string) ([]registryHost, error) {
	dirs := []string{registry}
	if i := strings.LastIndex(registry, ":"); i > 0 {
		dirs = []string{registry[:i] + "_" + registry[i+1:] + "_", registry[:i] + registry[i+1:]}
	}
	var data []byte
	for _, d := range append(dirs, "_default") {
		if b, err := files(strings.TrimRight(configPath, `\`) + `\` + d + `\hosts.toml`); err == nil {
			data = b
			break
		}
	}
	upstream := registryHost{scheme: "https", host: registry, pull: true, resolve: true}
	if registry == "docker.io" {
		upstream.host = "registry-1.docker.io"
	}
	if data == nil {
		return []registryHost{upstream}, nil
	}
	var raw map[string]any
	md, err := toml.Decode(string(data), &raw)
	if err != nil {
		return nil, fmt.Errorf("failed to decode hosts.toml: %w", err)
	}
	parse := func(server string, table map[string]any) (registryHost, error) {
		h := registryHost{pull: true, resolve: true}
		for k, v := range table {
			switch k {
			case "capabilities":
				h.pull, h.resolve = false, false
				caps, _ := v.([]any)
				for _, c := range caps {
					switch c {
					case "pull":
						h.pull = true
					case "resolve":
						h.resolve = true
					case "push", "referrers":
					default:
						return h, fmt.Errorf("unknown capability %v", c)
					}
				}
			case "server", "host":
			default:
				return h, fmt.Errorf("winsim: hosts.toml's %q is not modelled", k)
			}
		}
		if server != "" {
			if !strings.HasPrefix(server, "http") {
				server = "https://" + server
			}
			u, err := url.Parse(server)
			if err != nil {
				return h, fmt.Errorf("unable to parse server %v: %w", server, err)
			}
			if u.Path != "" && u.Path != "/" && u.Path != "/v2" {
				return h, fmt.Errorf("winsim: a hosts.toml host with a path (%s) is not modelled", server)
			}
			h.scheme, h.host = u.Scheme, u.Host
		}
		return h, nil
	}
	var hosts []registryHost
	tables, _ := raw["host"].(map[string]any)
	for _, k := range md.Keys() {
		if len(k) != 2 || k[0] != "host" {
			continue
		}
		t, _ := tables[k[1]].(map[string]any)
		h, err := parse(k[1], t)
		if err != nil {
			return nil, err
		}
		hosts = append(hosts, h)
	}
	server, _ := raw["server"].(string)
	root, err := parse(server, raw)
	if err != nil {
		return nil, err
	}
	if root.host == "" {
		root.scheme, root.host = upstream.scheme, upstream.host
	}
	return append(hosts, root), nil
}

// PullThroughHosts resolves image as containerd does with a hosts
// directory (the CRI plugin's config_path, ctr's --hosts-dir), reading
// hosts.toml with files and taking each contacted host's credential from
// auth (zero for none), and returns containerd's error when it cannot.
//
// upstream, when not nil, answers for the image's own registry (its status
// for the manifest, 200 or 404, or the connection's failure: a site that
// reaches the registry only through its proxy holds this fallback to it as
// any pull) where the caller models it; without it the upstream host is not
// reachable, as every host but loopback.
func PullThroughHosts(ctx context.Context, files func(string) ([]byte, error), configPath string, auth func(host string) [2]string, upstream func() (int, error), image string) error {
	wrap := func(err error) error {
		return fmt.Errorf("failed to resolve reference %q: %w", image, err)
	}
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return fmt.Errorf("failed to parse image reference %q: %v", image, err)
	}
	registry, repo := reference.Domain(named), reference.Path(named)
	object, needResolve := "latest", true
	if d, ok := named.(reference.Digested); ok {
		object, needResolve = d.Digest().String(), false
	} else if t, ok := named.(reference.Tagged); ok {
		object = t.Tag()
	}
	hosts, err := loadHosts(files, configPath, registry)
	if err != nil {
		return wrap(err)
	}
	var firstErr error
	priority := 0
	for _, h := range hosts {
		if !h.pull || needResolve && !h.resolve {
			continue
		}
		u := h.scheme + "://" + h.host + "/v2/" + repo + "/manifests/" + object
		if h.host != registry {
			u += "?ns=" + url.QueryEscape(registry)
		}
		var status int
		var err error
		if upstream != nil && (h.host == registry || registry == "docker.io" && h.host == "registry-1.docker.io") {
			status, err = upstream()
		} else {
			status, err = headManifest(ctx, u, h.host, auth(h.host))
		}
		switch {
		case err != nil:
			if priority < 1 {
				firstErr, priority = fmt.Errorf("failed to do request: Head %q: %w", u, err), 1
			}
		case status == http.StatusNotFound:
			if priority < 2 {
				firstErr, priority = fmt.Errorf("%s: not found", named.String()), 2
			}
		case status > 399:
			if priority < 3 {
				firstErr, priority = fmt.Errorf("unexpected status from HEAD request to %s: %d %s", u, status, http.StatusText(status)), 3
			}
		case status > 299:
			return wrap(fmt.Errorf("unexpected status from HEAD request to %s: %d %s", u, status, http.StatusText(status)))
		default:
			return nil
		}
	}
	if firstErr == nil {
		firstErr = fmt.Errorf("no resolve hosts: not found")
	}
	return wrap(firstErr)
}

// headManifest sends the HEAD, answering a Basic challenge with the host's
// credential once. Only loopback addresses are reached.
func headManifest(ctx context.Context, u, host string, cred [2]string) (int, error) {
	hostname := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		hostname = h
	}
	if a, err := netip.ParseAddr(hostname); err != nil || !a.IsLoopback() {
		return 0, &net.DNSError{Err: "no such host", Name: hostname, IsNotFound: true}
	}
	client := &http.Client{Timeout: 30 * time.Second}
	do := func(withAuth bool) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodHead, u, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/vnd.oci.image.index.v1+json, application/vnd.docker.distribution.manifest.list.v2+json, application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json, */*")
		if withAuth {
			req.SetBasicAuth(cred[0], cred[1])
		}
		return client.Do(req)
	}
	resp, err := do(false)
	if err != nil {
		return 0, err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		return resp.StatusCode, nil
	}
	challenge := resp.Header.Get("WWW-Authenticate")
	switch {
	case strings.HasPrefix(strings.ToLower(challenge), "basic"):
	case challenge == "":
		return resp.StatusCode, nil
	default:
		return 0, errors.New("winsim: a registry's " + strings.SplitN(challenge, " ", 2)[0] + " challenge is not modelled (basic only)")
	}
	if cred[0] == "" && cred[1] == "" {
		return resp.StatusCode, nil // no credential for the host: the 401 stands
	}
	resp, err = do(true)
	if err != nil {
		return 0, err
	}
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

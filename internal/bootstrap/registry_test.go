package bootstrap

import (
	"strings"
	"testing"

	tomlv2 "github.com/pelletier/go-toml/v2"
)

const testRegistryPassword = `s3cr"et'pw\x`

func testRegistry() Registry {
	return Registry{
		Mirrors: []RegistryMirror{
			{Registry: "registry.k8s.io", Endpoints: []string{"https://mirror.example.com:5000"}},
			{Registry: "mcr.microsoft.com", Endpoints: []string{"https://mirror.example.com:5000", "https://backup.example.com"}, Server: "https://mcr.microsoft.com"},
		},
		Credentials: []RegistryCredential{{Host: "mirror.example.com:5000", Username: "puller", Password: testRegistryPassword}},
	}
}

// redactedSteps joins steps with their secrets replaced, as the runner
// scrubs them, so no golden file holds a password.
func redactedSteps(steps []Step) string {
	for i := range steps {
		for _, s := range steps[i].Secrets {
			steps[i].Script = strings.ReplaceAll(steps[i].Script, s, "<redacted>")
		}
	}
	return joinSteps(steps)
}

// TestRegistryConfigIsWhatContainerdReads: config.toml's registry section
// parses (go-toml v2, containerd 2's reader) into config_path and the
// mirror's auth with the password intact, whatever quotes it holds.
func TestRegistryConfigIsWhatContainerdReads(t *testing.T) {
	conf := containerdConfig("registry.k8s.io/pause:3.10.2", "2.3.4", testRegistry())
	var raw struct {
		Plugins map[string]struct {
			Registry struct {
				ConfigPath string `toml:"config_path"`
				Configs    map[string]struct {
					Auth struct{ Username, Password string } `toml:"auth"`
				} `toml:"configs"`
			} `toml:"registry"`
		} `toml:"plugins"`
	}
	if err := tomlv2.Unmarshal([]byte(conf), &raw); err != nil {
		t.Fatalf("config.toml does not parse: %v\n%s", err, conf)
	}
	reg := raw.Plugins["io.containerd.cri.v1.images"].Registry
	if reg.ConfigPath != RegistryHostsDir {
		t.Errorf("config_path = %q, want %q", reg.ConfigPath, RegistryHostsDir)
	}
	if a := reg.Configs["mirror.example.com:5000"].Auth; a.Username != "puller" || a.Password != testRegistryPassword {
		t.Errorf("auth = %+v, want puller and the password", a)
	}
	v2 := containerdConfig("p", "1.7.30", testRegistry())
	if !strings.Contains(v2, `[plugins."io.containerd.grpc.v1.cri".registry]`) {
		t.Errorf("containerd 1.7's config has no registry section:\n%s", v2)
	}
}

func TestHostsTOML(t *testing.T) {
	m := testRegistry().Mirrors[1]
	var raw struct {
		Server string
		Host   map[string]struct{ Capabilities []string }
	}
	if err := tomlv2.Unmarshal([]byte(HostsTOML(m)), &raw); err != nil {
		t.Fatal(err)
	}
	if raw.Server != "https://mcr.microsoft.com" || len(raw.Host) != 2 || len(raw.Host["https://backup.example.com"].Capabilities) != 2 {
		t.Errorf("hosts.toml = %+v", raw)
	}
	if i, j := strings.Index(HostsTOML(m), "mirror.example.com"), strings.Index(HostsTOML(m), "backup.example.com"); i > j {
		t.Error("hosts.toml does not keep the endpoints' order, which containerd tries them in")
	}
	if got := RegistryHostDir("myregistry.io:5000"); got != RegistryHostsDir+`\myregistry.io_5000_` {
		t.Errorf("RegistryHostDir = %q", got)
	}
}

func TestRegistryValidate(t *testing.T) {
	for name, r := range map[string]Registry{
		"no endpoints":         {Mirrors: []RegistryMirror{{Registry: "docker.io"}}},
		"credential in URL":    {Mirrors: []RegistryMirror{{Registry: "docker.io", Endpoints: []string{"https://u:p@m.example.com"}}}},
		"not a host":           {Mirrors: []RegistryMirror{{Registry: "https://docker.io", Endpoints: []string{"https://m.example.com"}}}},
		"credential elsewhere": {Mirrors: []RegistryMirror{{Registry: "docker.io", Endpoints: []string{"https://m.example.com"}}}, Credentials: []RegistryCredential{{Host: "other.example.com", Username: "u", Password: "p"}}},
		"no password":          {Mirrors: []RegistryMirror{{Registry: "docker.io", Endpoints: []string{"https://m.example.com"}}}, Credentials: []RegistryCredential{{Host: "m.example.com", Username: "u"}}},
	} {
		if err := r.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := testRegistry().Validate(); err != nil {
		t.Error(err)
	}
}

// TestRegistryStepsCarryTheCredential: the steps whose scripts hold the
// password declare it, so the runner scrubs it, and the prepull passes it
// to ctr on its command line with the mirror's hosts directory.
func TestRegistryStepsCarryTheCredential(t *testing.T) {
	cfg := testImageConfig()
	cfg.Registry = testRegistry()
	steps, err := ImageSteps(cfg)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, s := range steps {
		seen[s.Name] = true
		if strings.Contains(s.Script, "s3cr") && !s.Sensitive() {
			t.Errorf("step %s holds the password but declares no secret", s.Name)
		}
		if s.Name == "prepull-images" && (!strings.Contains(s.Script, "--hosts-dir '"+RegistryHostsDir+"'") || !strings.Contains(s.Script, "--user 'puller:")) {
			t.Errorf("the prepull does not pull through the mirror with its credential:\n%s", s.Script)
		}
	}
	if !seen["registry-hosts"] {
		t.Error("no registry-hosts step")
	}
}

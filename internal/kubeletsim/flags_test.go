package kubeletsim

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
)

func TestSplitCommandLine(t *testing.T) {
	for _, tc := range []struct {
		line string
		exe  string
		args []string
	}{
		{`C:\k\kubelet.exe --windows-service --v=2`, `C:\k\kubelet.exe`, []string{"--windows-service", "--v=2"}},
		{`"C:\Program Files\containerd\bin\containerd.exe" --run-service --config "C:\Program Files\containerd\config.toml"`,
			`C:\Program Files\containerd\bin\containerd.exe`, []string{"--run-service", "--config", `C:\Program Files\containerd\config.toml`}},
		{`C:\k\kubelet.exe --node-labels="a=b,c=d" --x=\"q\"`, `C:\k\kubelet.exe`, []string{"--node-labels=a=b,c=d", `--x="q"`}},
		{`  `, "", nil},
	} {
		exe, args := SplitCommandLine(tc.line)
		if exe != tc.exe || !reflect.DeepEqual(args, tc.args) {
			t.Errorf("SplitCommandLine(%q) = %q %q, want %q %q", tc.line, exe, args, tc.exe, tc.args)
		}
	}
}

// TestFlagTable: every flag the simulator reads exists in kubelet v1.36,
// and flags the old recipes used do not.
func TestFlagTable(t *testing.T) {
	known := map[string]bool{}
	for _, f := range kubeletFlagTable {
		known[f.name] = true
	}
	f, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	f.set.VisitAll(func(fl *pflag.Flag) {
		if !known[fl.Name] {
			t.Errorf("the simulator reads --%s, which kubelet v1.36 does not have", fl.Name)
		}
	})
	for _, removed := range []string{"network-plugin", "cni-bin-dir", "cni-conf-dir", "pod-infra-container-image",
		"image-pull-progress-deadline", "allow-privileged", "logtostderr", "log-dir", "log-file", "docker-endpoint"} {
		if known[removed] {
			t.Errorf("--%s is in the flag table, but kubelet v1.36 removed it", removed)
		}
	}
}

func TestParseFlags(t *testing.T) {
	f, err := parseFlags([]string{"--windows-service", "--v=2", "--hostname_override=WIN-0", "--node-labels=a=b,example.com/pool=web",
		"--register-with-taints=os=windows:NoSchedule,dedicated:NoExecute", "--cluster-dns=10.96.0.10", "--enable-debugging-handlers", "--resolv-conf="})
	if err != nil {
		t.Fatal(err)
	}
	if !f.WindowsService || f.HostnameOverride != "WIN-0" || f.NodeLabels["example.com/pool"] != "web" {
		t.Errorf("flags = %+v", f)
	}
	want := []corev1.Taint{{Key: "os", Value: "windows", Effect: "NoSchedule"}, {Key: "dedicated", Effect: "NoExecute"}}
	if !reflect.DeepEqual(f.RegisterWithTaints, want) {
		t.Errorf("taints = %v", f.RegisterWithTaints)
	}
	if len(f.warnings) != 4 || !strings.HasPrefix(f.warnings[0], "Flag --register-with-taints has been deprecated") {
		t.Errorf("warnings = %q", f.warnings)
	}
	for args, want := range map[string]string{
		"--network-plugin=cni":                       "failed to parse kubelet flag: unknown flag: --network-plugin",
		"--pod-infra-container-image=pause:3.9":      "unknown flag: --pod-infra-container-image",
		"--image-pull-progress-deadline=20m":         "unknown flag: --image-pull-progress-deadline",
		"--register-with-taints=os=windows:Sometime": "unsupported taint effect",
		"--windows-service=maybe":                    "invalid syntax",
		"run":                                        "unknown command run",
	} {
		if _, err := parseFlags(strings.Fields(args)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", args, err, want)
		}
	}
	for labels, want := range map[string]string{
		"node-role.kubernetes.io/worker=": "unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: [node-role.kubernetes.io/worker]",
		"example.com/pool=a b":            "invalid node labels",
		"node.kubernetes.io/windows-build=10.0.20348,topology.kubernetes.io/zone=a": "",
	} {
		f, err := parseFlags([]string{"--node-labels=" + labels})
		if err != nil {
			t.Fatal(err)
		}
		err = f.validate()
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("--node-labels=%s: err = %v, want %q", labels, err, want)
		}
	}
}

type memFS map[string][]byte

func (m memFS) ReadFile(p string) ([]byte, error) {
	b, ok := m[strings.ToLower(p)]
	if !ok {
		return nil, &notFound{p}
	}
	return b, nil
}

func (m memFS) WriteFile(p string, b []byte) error { m[strings.ToLower(p)] = b; return nil }

type notFound struct{ p string }

func (e *notFound) Error() string { return "Cannot find path '" + e.p + "' because it does not exist." }

// TestStartFailsLikeKubelet: what kubelet.exe exits with before it does
// anything fails Start and lands in the log.
func TestStartFailsLikeKubelet(t *testing.T) {
	files := memFS{
		`c:\k\kubelet.exe`: []byte("kubelet v1.36.3\n"),
		`c:\k\bad.yaml`:    []byte("apiVersion: kubelet.config.k8s.io/v1\nkind: KubeletConfiguration\n"),
		`c:\k\good.yaml`:   []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nclusterDNS: [10.96.0.10]\nnotAField: 1\n"),
	}
	for _, tc := range []struct {
		exe  string
		args []string
		want string
	}{
		{`C:\k\kubelet.exe`, []string{"--network-plugin=cni"}, "Error: failed to parse kubelet flag: unknown flag: --network-plugin"},
		{`C:\k\missing.exe`, nil, `CreateProcess C:\k\missing.exe: The system cannot find the file specified.`},
		{`C:\k\kubelet.exe`, []string{`--config=C:\k\bad.yaml`}, `no kind "KubeletConfiguration" is registered for version "kubelet.config.k8s.io/v1"`},
		{`C:\k\kubelet.exe`, []string{`--config=C:\k\none.yaml`}, `failed to load kubelet config file, path: C:\k\none.yaml`},
	} {
		var log bytes.Buffer
		_, err := Start(context.Background(), Config{Executable: tc.exe, Args: tc.args, Files: files, Log: &log})
		if err == nil || !strings.Contains(log.String(), tc.want) {
			t.Errorf("%s %v: err %v, log %q, want %q", tc.exe, tc.args, err, log.String(), tc.want)
		}
	}
	// Unknown fields only warn; the kubelet starts (and, with no API server
	// to reach, keeps failing its bootstrap in the background).
	var log bytes.Buffer
	k, err := Start(context.Background(), Config{Executable: `C:\k\kubelet.exe`, Args: []string{`--config=C:\k\good.yaml`}, Files: files, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	k.Stop()
	if !strings.Contains(log.String(), "Using lenient decoding as strict decoding failed") || !strings.Contains(log.String(), `clusterDNS=["10.96.0.10"]`) {
		t.Errorf("log %s", log.String())
	}
}

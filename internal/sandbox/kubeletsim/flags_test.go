package kubeletsim

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/controlplane"
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

// testChecker finds kubeletcheck next to the control plane, as the sandbox
// does, skipping under -short when no control-plane directory is given.
func testChecker(t *testing.T) string {
	t.Helper()
	if os.Getenv(controlplane.BinEnv) == "" && testing.Short() {
		t.Skipf("-short and %s unset: not building kubeletcheck", controlplane.BinEnv)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	dir, err := controlplane.ResolveBinaries(ctx, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	p, err := checkerPath(filepath.Join(dir, CheckerName))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCheckerFlags: the kubelet's own flag set and checks, through
// kubeletcheck, fail what kubelet.exe v1.36 fails.
func TestCheckerFlags(t *testing.T) {
	helper := testChecker(t)
	ctx := context.Background()
	res, err := checkKubelet(ctx, helper, memFS{}, []string{"--windows-service", "--v=2", "--hostname_override=WIN-0",
		"--node-labels=a=b,example.com/pool=web", "--register-with-taints=os=windows:NoSchedule,dedicated:NoExecute",
		"--cluster-dns=10.96.0.10", "--enable-debugging-handlers", "--resolv-conf="})
	if err != nil || res.Error != "" {
		t.Fatal(err, res.Error)
	}
	f := flagsFrom(res.Flags, res.Changed)
	s := settingsFrom(res.Config)
	if !f.WindowsService || f.HostnameOverride != "WIN-0" || f.NodeLabels["example.com/pool"] != "web" || f.CertDir != `C:\var\lib\kubelet\pki` {
		t.Errorf("flags = %+v", f)
	}
	want := []corev1.Taint{{Key: "os", Value: "windows", Effect: "NoSchedule"}, {Key: "dedicated", Effect: "NoExecute"}}
	if !reflect.DeepEqual(s.RegisterWithTaints, want) || s.ResolvConf != "" || s.ClusterDNS[0] != "10.96.0.10" {
		t.Errorf("settings = %+v", s)
	}
	if len(res.Output) < 4 || !strings.HasPrefix(res.Output[0], "Flag --register-with-taints has been deprecated") {
		t.Errorf("output = %q", res.Output)
	}
	for args, want := range map[string]string{
		"--network-plugin=cni":                          "failed to parse kubelet flag: unknown flag: --network-plugin",
		"--pod-infra-container-image=pause:3.9":         "unknown flag: --pod-infra-container-image",
		"--image-pull-progress-deadline=20m":            "unknown flag: --image-pull-progress-deadline",
		"--housekeeping-interval=10s":                   "unknown flag: --housekeeping-interval", // Linux builds only
		"--register-with-taints=os=windows:Sometime":    "unsupported taint effect",
		"--windows-service=maybe":                       "invalid syntax",
		"run":                                           "unknown command run",
		"--node-labels=node-role.kubernetes.io/worker=": "unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: [node-role.kubernetes.io/worker]",
		"--node-labels=example.com/pool=a@b":            "invalid node labels",
		"--image-gc-high-threshold=200":                 "failed to validate kubelet configuration, error: invalid configuration: imageGCHighThresholdPercent (--image-gc-high-threshold) 200 must be between 0 and 100, inclusive",
	} {
		res, err := checkKubelet(ctx, helper, memFS{}, strings.Fields(args))
		if err != nil || !strings.Contains(res.Error, want) {
			t.Errorf("%s: err = %v %q, want %q", args, err, res.Error, want)
		}
	}
	// The config file, flags over it, Windows rules.
	files := memFS{`c:\k\config.yaml`: []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 30\nclusterDomain: cluster.local\nsingleProcessOOMKill: true\n")}
	res, err = checkKubelet(ctx, helper, files, []string{`--config=C:\k\config.yaml`})
	if err != nil || !strings.Contains(res.Error, "singleProcessOOMKill is not supported on Windows") {
		t.Errorf("singleProcessOOMKill: %v %q", err, res.Error)
	}
	files[`c:\k\config.yaml`] = []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 30\nclusterDomain: cluster.local\n")
	res, err = checkKubelet(ctx, helper, files, []string{`--config`, `C:\k\config.yaml`, "--max-pods=40"})
	if err != nil || res.Error != "" {
		t.Fatal(err, res.Error)
	}
	if s := settingsFrom(res.Config); s.MaxPods != 40 || s.ClusterDomain != "cluster.local" || s.EvictionHard["memory.available"] != "500Mi" {
		t.Errorf("settings = %+v", s)
	}
	if !strings.Contains(strings.Join(res.Output, "\n"), "ignored configuration option: CgroupsPerQOS (--cgroups-per-qos) true is not supported on Windows") {
		t.Errorf("output = %q", res.Output)
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
	helper := testChecker(t)
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
		_, err := Start(context.Background(), Config{Checker: helper, Executable: tc.exe, Args: tc.args, Files: files, Log: &log})
		if err == nil || !strings.Contains(log.String(), tc.want) {
			t.Errorf("%s %v: err %v, log %q, want %q", tc.exe, tc.args, err, log.String(), tc.want)
		}
	}
	// Unknown fields only warn; the kubelet starts (and, with no API server
	// to reach, keeps failing its bootstrap in the background).
	var log bytes.Buffer
	k, err := Start(context.Background(), Config{Checker: helper, Executable: `C:\k\kubelet.exe`, Args: []string{`--config=C:\k\good.yaml`}, Files: files, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	k.Stop()
	if !strings.Contains(log.String(), "Using lenient decoding as strict decoding failed") || !strings.Contains(log.String(), `clusterDNS=["10.96.0.10"]`) {
		t.Errorf("log %s", log.String())
	}
}

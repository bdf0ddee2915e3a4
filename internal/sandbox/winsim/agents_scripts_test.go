package winsim

import (
	"bytes"
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// The start scripts of the flannel and kube-proxy HostProcess containers, as
// the provider renders them (internal/kube's golden files), run the way the
// container runs them: powershell.exe -Command "& (Join-Path mount ...)",
// with the pod's environment, on a host whose flanneld.exe and
// kube-proxy.exe are stubs that record how they were started.
func TestAgentStartScripts(t *testing.T) {
	type started struct {
		args []string
		env  map[string]string
	}
	var mu sync.Mutex
	runs := map[string]started{}
	record := func(name string, p *Process) {
		mu.Lock()
		defer mu.Unlock()
		runs[name] = started{args: append([]string(nil), p.Args...), env: p.Env}
	}
	h := startTestHost(t, func(c *HostConfig) {
		c.Programs = map[string]Program{
			"flanneld": func(ctx context.Context, p *Process) int {
				record("flanneld", p)
				if err := p.Host.fs.MkdirAll(`C:\run\flannel`); err != nil {
					return 2
				}
				env := "FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.3.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n"
				if err := p.Host.fs.WriteFile(`C:\run\flannel\subnet.env`, []byte(env), false); err != nil {
					return 2
				}
				return 0
			},
			"kube-proxy": func(ctx context.Context, p *Process) int {
				record("kube-proxy", p)
				return 0
			},
		}
	})
	mount := `C:\C\0123456789abcdef\`
	write := func(path string, data []byte) {
		t.Helper()
		if err := h.fs.MkdirAll(parentOf(h.fs.Clean(path))); err != nil {
			t.Fatal(err)
		}
		if err := h.WriteFile(path, data); err != nil {
			t.Fatal(err)
		}
	}
	golden := func(name string) []byte {
		t.Helper()
		b, err := os.ReadFile("../../kube/testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	kubeconfig := "apiVersion: v1\nkind: Config\nusers:\n- name: sa\n  user:\n    tokenFile: CONTAINER_SANDBOX_MOUNT_POINT/var/run/secrets/kubernetes.io/serviceaccount/token\n"
	for _, cm := range []string{"kube-flannel-windows", "kube-proxy-windows"} {
		write(mount+`etc\`+cm+`\kubeconfig.conf`, []byte(kubeconfig))
	}
	write(mount+`etc\kube-flannel-windows\net-conf.json`, []byte(`{"Network":"10.244.0.0/16","Backend":{"Type":"vxlan","VNI":4096,"Port":4789}}`))
	write(mount+`etc\kube-flannel-windows\start.ps1`, golden("kube-flannel-ds-windows-start.ps1"))
	write(mount+`etc\kube-proxy-windows\start.ps1`, golden("kube-proxy-windows-start.ps1"))
	write(`C:\k\flanneld.exe`, exe("flanneld", "v0.26.0"))
	write(`C:\k\kube-proxy.exe`, exe("kube-proxy", "v1.34.1"))
	write(`C:\opt\cni\bin\host-local.exe`, []byte("MZ simulated Windows executable\r\nhost-local v1.9.1\r\n"))

	run := func(configMap string) (string, string, int) {
		var out, errOut bytes.Buffer
		code := h.Run(context.Background(), &Process{
			Path: powershellPath,
			Args: []string{"-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-Command",
				"& (Join-Path $env:CONTAINER_SANDBOX_MOUNT_POINT '/etc/" + configMap + "/start.ps1')"},
			Env: map[string]string{"CONTAINER_SANDBOX_MOUNT_POINT": mount, "NODE_NAME": "win-0", "HOST_IP": "192.168.1.20",
				"POD_NAME": "x", "POD_NAMESPACE": "kube-system", "PATH": defaultPath},
			Stdout: &out, Stderr: &errOut,
		})
		return out.String(), errOut.String(), code
	}

	out, stderr, code := run("kube-flannel-windows")
	if code != 0 {
		t.Fatalf("flannel: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	fl := runs["flanneld"]
	wantArgs := []string{"--kube-subnet-mgr", `--kubeconfig-file=C:\var\lib\kube-flannel-windows\kubeconfig.conf`,
		`--net-config-path=C:\etc\kube-flannel\net-conf.json`, "--iface=192.168.1.20"}
	if strings.Join(fl.args, " ") != strings.Join(wantArgs, " ") {
		t.Errorf("flanneld args %q, want %q", fl.args, wantArgs)
	}
	if fl.env["NODE_NAME"] != "win-0" || fl.env["POD_NAMESPACE"] != "kube-system" {
		t.Errorf("flanneld env %v", fl.env)
	}
	conf, err := h.fs.ReadFile(`C:\var\lib\kube-flannel-windows\kubeconfig.conf`)
	if err != nil || !strings.Contains(string(conf), "tokenFile: "+mount+"/var/run/secrets") || strings.Contains(string(conf), "CONTAINER_SANDBOX_MOUNT_POINT") {
		t.Errorf("flannel kubeconfig %q (%v)", conf, err)
	}
	if !h.FileExists(`C:\etc\kube-flannel\net-conf.json`) {
		t.Errorf("net-conf.json not copied")
	}

	out, stderr, code = run("kube-proxy-windows")
	if code != 0 {
		t.Fatalf("kube-proxy: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	if !strings.Contains(out, "source VIP 10.244.3.2") {
		t.Errorf("kube-proxy script output %q", out)
	}
	kp := strings.Join(runs["kube-proxy"].args, " ")
	for _, want := range []string{"--source-vip=10.244.3.2", "--network-name=flannel.4096", "--hostname-override=win-0",
		`--kubeconfig=C:\var\lib\kube-proxy-windows\kubeconfig.conf`, "--proxy-mode=kernelspace", "--cluster-cidr=10.244.0.0/16"} {
		if !strings.Contains(kp, want) {
			t.Errorf("kube-proxy args %q lack %s", kp, want)
		}
	}
	vip, _ := h.fs.ReadFile(`C:\sourcevip\sourceVip.json`)
	if !strings.Contains(string(vip), `10.244.3.2/24`) {
		t.Errorf("sourceVip.json %q", vip)
	}
	// A restart reuses the reservation.
	if _, stderr, code := run("kube-proxy-windows"); code != 0 || !strings.Contains(strings.Join(runs["kube-proxy"].args, " "), "--source-vip=10.244.3.2") {
		t.Errorf("restart: exit %d, stderr %q, args %q", code, stderr, runs["kube-proxy"].args)
	}
}

// kube-proxy's script waits for flannel's lease with a FileSystemWatcher:
// the loop's Write-Output reaches the container log while it waits, a
// stopped container (ctx cancelled) ends the script, and the lease written
// wakes it at once (no poll interval to sit out).
func TestKubeProxyScriptWaitsForFlannel(t *testing.T) {
	var mu sync.Mutex
	var proxyArgs []string
	h := startTestHost(t, func(c *HostConfig) {
		c.Programs = map[string]Program{"kube-proxy": func(ctx context.Context, p *Process) int {
			mu.Lock()
			defer mu.Unlock()
			proxyArgs = append([]string(nil), p.Args...)
			return 0
		}}
	})
	mount := `C:\C\feed\`
	for path, data := range map[string][]byte{
		mount + `etc\kube-proxy-windows\kubeconfig.conf`: []byte("server: x\n"),
		mount + `etc\kube-proxy-windows\start.ps1`:       nil,
		`C:\k\kube-proxy.exe`:                            exe("kube-proxy", "v1.34.1"),
		`C:\opt\cni\bin\host-local.exe`:                  exe("host-local", "v1.9.1"),
	} {
		if data == nil {
			b, err := os.ReadFile("../../kube/testdata/kube-proxy-windows-start.ps1")
			if err != nil {
				t.Fatal(err)
			}
			data = b
		}
		if err := h.fs.MkdirAll(parentOf(h.fs.Clean(path))); err != nil {
			t.Fatal(err)
		}
		if err := h.WriteFile(path, data); err != nil {
			t.Fatal(err)
		}
	}
	run := func(ctx context.Context, out *syncBuffer) int {
		return h.Run(ctx, &Process{Path: powershellPath,
			Args: []string{"-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-Command",
				"& (Join-Path $env:CONTAINER_SANDBOX_MOUNT_POINT '/etc/kube-proxy-windows/start.ps1')"},
			Env:    map[string]string{"CONTAINER_SANDBOX_MOUNT_POINT": mount, "NODE_NAME": "win-1", "PATH": defaultPath},
			Stdout: out, Stderr: out})
	}

	// Stopped while waiting: the script ends, kube-proxy never starts.
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, &out) }()
	time.Sleep(300 * time.Millisecond)
	if !strings.Contains(out.String(), `waiting for flannel to write C:\run\flannel\subnet.env`) {
		t.Errorf("no waiting line while waiting: %q", out.String())
	}
	cancel()
	select {
	case code := <-done:
		if code == 0 || proxyArgs != nil {
			t.Errorf("cancelled: exit %d, kube-proxy %q", code, proxyArgs)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the script did not end when its container stopped")
	}

	// The lease appears while the script waits (flanneld writes a temporary
	// file and renames it into place): the watcher wakes it at once, not
	// after its 2 s timeout.
	var out2 syncBuffer
	written := make(chan time.Time, 1)
	go func() {
		time.Sleep(500 * time.Millisecond)
		_ = h.fs.MkdirAll(`C:\run\flannel`)
		_ = h.fs.WriteFile(`C:\run\flannel\.subnet.env`, []byte("FLANNEL_NETWORK=10.244.0.0/16\r\nFLANNEL_SUBNET=10.244.7.1/24\r\n"), false)
		_ = h.fs.Move(`C:\run\flannel\.subnet.env`, `C:\run\flannel\subnet.env`, true)
		written <- time.Now()
	}()
	if code := run(context.Background(), &out2); code != 0 {
		t.Fatalf("exit %d: %s", code, out2.String())
	}
	if el := time.Since(<-written); el > time.Second {
		t.Errorf("the script went on %v after the lease appeared, want at once", el)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(strings.Join(proxyArgs, " "), "--source-vip=10.244.7.2") || !strings.Contains(strings.Join(proxyArgs, " "), "--hostname-override=win-1") {
		t.Errorf("kube-proxy args %q\n%s", proxyArgs, out2.String())
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

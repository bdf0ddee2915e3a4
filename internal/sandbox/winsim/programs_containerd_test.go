package winsim

import (
	"fmt"
	"strings"
	"testing"
)

func TestContainerdService(t *testing.T) {
	h := startSCMHost(t, nil)
	dir := `C:\Program Files\containerd`
	if err := h.WriteFile(dir+`\bin\containerd.exe`, exe("containerd", "v2.2.0")); err != nil {
		t.Fatal(err)
	}
	if err := h.WriteFile(dir+`\config.toml`, []byte("version = 3\r\n[plugins.\"io.containerd.cri.v1.images\".pinned_images]\r\n  sandbox = \"registry.k8s.io/pause:3.10.1\"\r\n[plugins.\"io.containerd.cri.v1.runtime\".cni]\r\n  bin_dirs = ['C:\\opt\\cni\\bin']\r\n  conf_dir = 'C:\\etc\\cni\\net.d'\r\n")); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runProgram(t, h.Host, dir+`\bin\containerd.exe`, "--register-service", "--config", dir+`\config.toml`)
	if code != 0 {
		t.Fatalf("--register-service: %q %d", errOut, code)
	}
	s, _ := h.Service("containerd")
	if s.BinaryPathName != `"C:\Program Files\containerd\bin\containerd.exe" --run-service --config "C:\Program Files\containerd\config.toml"` || s.DisplayName != "Containerd" || s.StartupType != StartupAutomatic {
		t.Fatalf("registered %+v", s)
	}
	if err := h.startService("containerd"); err != nil {
		t.Fatal(err)
	}
	cfg, ok := h.ContainerdConfig()
	if !ok || cfg.SandboxImage != "registry.k8s.io/pause:3.10.1" || cfg.CNIConfDir != `C:\etc\cni\net.d` || fmt.Sprint(cfg.CNIBinDirs) != `[C:\opt\cni\bin]` {
		t.Fatalf("config %+v", cfg)
	}
	if err := h.stopService("containerd"); err != nil {
		t.Fatal(err)
	}
	// A v2-shaped CRI section in a version 3 file is ignored with a warning.
	if err := h.WriteFile(dir+`\config.toml`, []byte("version = 3\r\n[plugins.\"io.containerd.grpc.v1.cri\"]\r\n  sandbox_image = \"x/pause:1\"\r\n")); err != nil {
		t.Fatal(err)
	}
	if err := h.startService("containerd"); err != nil {
		t.Fatal(err)
	}
	cfg, _ = h.ContainerdConfig()
	if cfg.SandboxImage != "registry.k8s.io/pause:3.10.1" || len(cfg.Warnings) == 0 {
		t.Fatalf("v3 with a v2 section: %+v", cfg)
	}
	if err := h.stopService("containerd"); err != nil {
		t.Fatal(err)
	}
	// Versions above what the binary reads stop it before Running.
	if err := h.WriteFile(dir+`\config.toml`, []byte("version = 4\r\n")); err != nil {
		t.Fatal(err)
	}
	wantCode(t, h.startService("containerd"), 1067)
	if err := h.WriteFile(dir+`\bin\containerd.exe`, exe("containerd", "v1.7.24")); err != nil {
		t.Fatal(err)
	}
	if err := h.WriteFile(dir+`\config.toml`, []byte("version = 3\r\n")); err != nil {
		t.Fatal(err)
	}
	wantCode(t, h.startService("containerd"), 1067)
	if err := h.WriteFile(dir+`\config.toml`, []byte("version = 2\r\n[plugins.\"io.containerd.grpc.v1.cri\"]\r\n  sandbox_image = \"x/pause:2\"\r\n")); err != nil {
		t.Fatal(err)
	}
	if err := h.startService("containerd"); err != nil {
		t.Fatal(err)
	}
	if cfg, _ = h.ContainerdConfig(); cfg.SandboxImage != "x/pause:2" {
		t.Fatalf("1.7 with version 2: %+v", cfg)
	}
	// Without --run-service containerd is a console daemon: 1053.
	h.create(t, Service{Name: "ctrd-console", BinaryPathName: `"` + dir + `\bin\containerd.exe"`})
	wantCode(t, h.startService("ctrd-console"), 1053)
	if _, _, code := runProgram(t, h.Host, dir+`\bin\containerd.exe`, "--unregister-service"); code != 0 {
		t.Fatalf("--unregister-service: %d", code)
	}
}

// TestContainerdDefaultSandboxImage: without a sandbox image in its
// configuration, each containerd uses its own release's default, which
// moved to pause 3.10.2 (the first with a Windows Server 2025 entry) in 2.3.
// A release whose defaults were not read (1.6, 2.4) does not start.
func TestContainerdDefaultSandboxImage(t *testing.T) {
	for version, want := range map[string]string{
		"v1.7.24": "registry.k8s.io/pause:3.8",
		"v2.1.5":  "registry.k8s.io/pause:3.10",
		"v2.2.7":  "registry.k8s.io/pause:3.10.1",
		"v2.3.0":  "registry.k8s.io/pause:3.10.2",
	} {
		t.Run(version, func(t *testing.T) {
			h := startSCMHost(t, nil)
			dir := `C:\Program Files\containerd`
			if err := h.WriteFile(dir+`\bin\containerd.exe`, exe("containerd", version)); err != nil {
				t.Fatal(err)
			}
			if _, errOut, code := runProgram(t, h.Host, dir+`\bin\containerd.exe`, "--register-service"); code != 0 {
				t.Fatalf("--register-service: %q %d", errOut, code)
			}
			if err := h.startService("containerd"); err != nil {
				t.Fatal(err)
			}
			if cfg, ok := h.ContainerdConfig(); !ok || cfg.SandboxImage != want {
				t.Fatalf("containerd %s without a config file: %+v, want sandbox image %s", version, cfg, want)
			}
		})
	}
	for _, version := range []string{"v1.6.36", "v2.4.0", "v3.0.0"} {
		t.Run(version, func(t *testing.T) {
			h := startSCMHost(t, nil)
			exePath := `C:\Program Files\containerd\bin\containerd.exe`
			if err := h.WriteFile(exePath, exe("containerd", version)); err != nil {
				t.Fatal(err)
			}
			_, errOut, code := runProgram(t, h.Host, exePath)
			if code != 1 || !strings.Contains(errOut, "containerd "+version+" is not modelled") {
				t.Fatalf("containerd %s: exit %d, stderr %q; want exit 1 and a refusal as not modelled", version, code, errOut)
			}
		})
	}
}

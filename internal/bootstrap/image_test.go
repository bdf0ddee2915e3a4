package bootstrap

import (
	"encoding/base64"
	"slices"
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/networking"
	"github.com/wincluster/terraform-provider-windows/internal/winversion"
)

func testImageConfig() ImageConfig {
	sum := strings.Repeat("ab", 32)
	return ImageConfig{
		KubernetesVersion: "v1.36.3",
		Containerd: Artifact{Name: "containerd", URL: "https://github.com/containerd/containerd/releases/download/v2.2.7/containerd-2.2.7-windows-amd64.tar.gz",
			SHA256: sum, Path: DownloadPath("https://github.com/containerd/containerd/releases/download/v2.2.7/containerd-2.2.7-windows-amd64.tar.gz"), ExtractTo: ContainerdDir},
		Kubelet:       Artifact{Name: "kubelet", URL: KubernetesArtifactURL("", "v1.36.3", "kubelet.exe"), SHA256: sum, Path: KubeletExe},
		KubeProxy:     Artifact{Name: "kube-proxy", URL: KubernetesArtifactURL("http://artifacts.internal:8080/k8s", "v1.36.3", "kube-proxy.exe"), SHA256: sum, Path: KubeProxyExe},
		KubeLogRunner: Artifact{Name: "kube-log-runner", URL: KubernetesArtifactURL("", "v1.36.3", "kube-log-runner.exe"), SHA256: sum, Path: KubeLogRunnerExe},
		CNIPlugins:    Artifact{Name: "cni-plugins", URL: "https://example.com/cni-plugins-windows-amd64-v1.9.1.tgz", SHA256: sum, Path: DownloadPath("https://example.com/cni-plugins-windows-amd64-v1.9.1.tgz"), ExtractTo: CNIBinDir},
		Additional: []Artifact{
			{Name: "flanneld", URL: "https://github.com/flannel-io/flannel/releases/download/v0.28.9/flanneld.exe", SHA256: sum, Path: networking.FlanneldExe},
			{Name: "flannel-cni-plugin", URL: "https://github.com/flannel-io/cni-plugin/releases/download/v1.9.1-flannel1/cni-plugin-flannel-windows-amd64-v1.9.1-flannel1.tgz", SHA256: sum,
				Path: DownloadPath("https://github.com/flannel-io/cni-plugin/releases/download/v1.9.1-flannel1/cni-plugin-flannel-windows-amd64-v1.9.1-flannel1.tgz"), ExtractTo: CNIBinDir,
				Member: "flannel-amd64.exe", InstallAs: CNIBinDir + `\flannel.exe`},
			{Name: "wins", URL: "https://example.com/wins.exe", SHA256: sum, Path: `C:\k\wins.exe`}},
		PrepullImages:    []string{"mcr.microsoft.com/oss/kubernetes/windows-host-process-containers-base-image:v1.0.0"},
		SSHAuthorizedKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOperatorKey operator@example.com",
		Updates: []WindowsUpdate{
			{KB: "KB5070010", URL: "http://mirror.internal/updates/windows10.0-kb5070010-x64.cab", SHA256: sum},
			{KB: "KB5070011", URL: "http://mirror.internal/updates/windows10.0-kb5070011-x64.msu", SHA256: sum},
		},
		Online: &OnlineUpdates{Categories: []string{"Security Updates", "Critical Updates"}, ExcludeKBs: []string{"KB5070014"},
			WSUSServer: "http://wsus.internal:8530"},
	}
}

func TestImageStepsGolden(t *testing.T) {
	steps, err := ImageSteps(testImageConfig())
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "image-steps.ps1", joinSteps(steps))
	var names []string
	for _, s := range steps {
		names = append(names, s.Name)
		if !strings.HasPrefix(s.Script, "# step: "+s.Name+"\n") {
			t.Errorf("step %s does not start with its step comment", s.Name)
		}
	}
	want := "prepare agent-dirs windows-update-KB5070010 windows-update-KB5070011 windows-updates-installed windows-update-wsus windows-update-online containers-feature install-containerd install-kubelet install-kube-proxy install-kube-log-runner install-cni-plugins install-flanneld install-flannel-cni-plugin install-wins containerd-service prepull-images vmware-tools firewall openssh verify windows-build"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("steps = %s\nwant    %s", got, want)
	}
}

func TestImageStepsRejectBadInput(t *testing.T) {
	cases := map[string]func(*ImageConfig){
		"version":        func(c *ImageConfig) { c.KubernetesVersion = "1.36" },
		"checksum":       func(c *ImageConfig) { c.Kubelet.SHA256 = "abc" },
		"url":            func(c *ImageConfig) { c.Containerd.URL = "ftp://x/containerd.tar.gz" },
		"archive":        func(c *ImageConfig) { c.CNIPlugins.URL = "https://x/cni.rar" },
		"empty url":      func(c *ImageConfig) { c.KubeProxy.URL = "" },
		"extra checksum": func(c *ImageConfig) { c.Additional[2].SHA256 = "" },
		"quote in url":   func(c *ImageConfig) { c.Kubelet.URL = "https://x/kubelet.exe?a=$(evil)" },
	}
	for name, mutate := range cases {
		cfg := testImageConfig()
		mutate(&cfg)
		if _, err := ImageSteps(cfg); err == nil {
			t.Errorf("%s: ImageSteps accepted invalid input", name)
		}
	}
}

func TestParsers(t *testing.T) {
	if b, err := ParseWindowsBuild("noise\r\nWINDOWS-BUILD=10.0.20348.2340\r\n"); err != nil || b != "10.0.20348.2340" {
		t.Errorf("ParseWindowsBuild = %q, %v", b, err)
	}
	if _, err := ParseWindowsBuild("nothing"); err == nil {
		t.Error("ParseWindowsBuild accepted output without a build")
	}
	if v := ContainerdVersion("https://github.com/containerd/containerd/releases/download/v2.1.4/containerd-2.1.4-windows-amd64.tar.gz"); v != "2.1.4" {
		t.Errorf("ContainerdVersion = %q", v)
	}
	if got := KubernetesArtifactURL("", "v1.36.3", "kubelet.exe"); got != "https://dl.k8s.io/release/v1.36.3/bin/windows/amd64/kubelet.exe" {
		t.Errorf("KubernetesArtifactURL = %q", got)
	}
}

func TestUnattendGolden(t *testing.T) {
	xml, err := Unattend(UnattendConfig{TimeZone: "W. Europe Standard Time"})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "unattend.xml", string(xml))
	// Setup caches the answer file on the template: it holds no password,
	// in any form, and no autologon.
	for _, no := range []string{"Password", "UserAccounts", "AutoLogon"} {
		if strings.Contains(string(xml), no) {
			t.Errorf("unattend.xml holds %s", no)
		}
	}
	step, err := SysprepStep(UnattendConfig{TimeZone: "W. Europe Standard Time"})
	if err != nil {
		t.Fatal(err)
	}
	if step.Sensitive() || !strings.Contains(step.Script, "'/generalize', '/oobe', '/shutdown'") {
		t.Errorf("sysprep step = %+v", step)
	}
	if !strings.Contains(step.Script, base64.StdEncoding.EncodeToString(xml)) {
		t.Error("the sysprep step does not write this answer file")
	}
	// The build VM takes the zone before sysprep, so the template holds it.
	if zone := strings.Index(step.Script, "Set-TimeZone -Id 'W. Europe Standard Time'"); zone < 0 || zone > strings.Index(step.Script, "/generalize") {
		t.Error("the sysprep step does not set the time zone before sysprep")
	}
	if _, err := SysprepStep(UnattendConfig{TimeZone: "Central Europe"}); err == nil {
		t.Error("the sysprep step took a time zone Windows does not have")
	}
	// The answer files an earlier Setup or customization left go before it.
	write := strings.Index(step.Script, "WriteAllBytes")
	for _, f := range AnswerFiles {
		if i := strings.Index(step.Script, "Remove-Item -LiteralPath '"+f+"'"); i < 0 || i > write {
			t.Errorf("the sysprep step does not remove %s before writing its answer file", f)
		}
	}
}

func TestContainerdConfigVersions(t *testing.T) {
	v3 := ContainerdConfig("registry.k8s.io/pause:3.10.1", "2.2.7")
	for _, want := range []string{"version = 3", "[plugins.'io.containerd.cri.v1.images'.pinned_images]", "sandbox = 'registry.k8s.io/pause:3.10.1'",
		"[plugins.'io.containerd.cri.v1.runtime'.cni]", `bin_dirs = ['C:\opt\cni\bin']`, `conf_dir = 'C:\etc\cni\net.d'`} {
		if !strings.Contains(v3, want) {
			t.Errorf("containerd 2.2 config lacks %q:\n%s", want, v3)
		}
	}
	if strings.Contains(v3, "bin_dir =") || strings.Contains(v3, "io.containerd.grpc.v1.cri") {
		t.Errorf("containerd 2.2 config has keys of version 2:\n%s", v3)
	}
	if v2 := ContainerdConfig("p", "1.7.24"); !strings.HasPrefix(v2, "version = 2") {
		t.Errorf("containerd 1.7 config is not version 2:\n%s", v2)
	}
	for v, want := range map[string]bool{"2.2.7": true, "2.3.4": true, "1.7.24": false, "2.1.5": false, "": true} {
		if ContainerdSupported(v) != want {
			t.Errorf("ContainerdSupported(%q) = %t, want %t", v, !want, want)
		}
	}
}

func TestImageStepsCheckNativeExitCodes(t *testing.T) {
	steps, err := ImageSteps(testImageConfig())
	if err != nil {
		t.Fatal(err)
	}
	sys, err := SysprepStep(UnattendConfig{})
	if err != nil {
		t.Fatal(err)
	}
	steps = append(steps, sys)
	checkNativeExitCodes(t, joinSteps(steps))
}

// TestValidateUpdates: each problem of windows_updates names the element
// and the fix.
func TestValidateUpdates(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	ok := WindowsUpdate{KB: "KB5070011", URL: "https://mirror.internal/u/windows10.0-kb5070011-x64.msu", SHA256: sum}
	if err := ValidateUpdates([]WindowsUpdate{ok, {KB: "KB5070010", URL: "http://mirror.internal/u/x.cab", SHA256: strings.ToUpper(sum)}}); err != nil {
		t.Fatalf("valid list refused: %v", err)
	}
	for _, tc := range []struct {
		name string
		u    []WindowsUpdate
		want string
	}{
		{"kb-format", []WindowsUpdate{{KB: "5070011", URL: ok.URL, SHA256: sum}}, `windows_updates[0].kb: "5070011" is not a KB id like KB5044281`},
		{"kb-twice", []WindowsUpdate{ok, ok}, "windows_updates[1].kb: KB5070011 is listed twice (also windows_updates[0])"},
		{"scheme", []WindowsUpdate{{KB: ok.KB, URL: "ftp://mirror/x.msu", SHA256: sum}}, `windows_updates[0] (KB5070011): "ftp://mirror/x.msu" is not an http(s) URL`},
		{"sha256", []WindowsUpdate{{KB: ok.KB, URL: ok.URL, SHA256: "abc"}}, `windows_updates[0] (KB5070011): "abc" is not a SHA-256 checksum`},
		{"extension", []WindowsUpdate{{KB: ok.KB, URL: "https://mirror/x.exe", SHA256: sum}}, `windows_updates[0].url: "https://mirror/x.exe" is not a .cab (installed with DISM) or .msu (installed with wusa.exe) package`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateUpdates(tc.u)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// pauseWindowsBuilds are the Windows builds of the windows/amd64 entries in
// registry.k8s.io/pause's manifest lists (of the releases the provider
// accepts), as upstream states them, not read from the registry: 3.4 added
// 1809 (Windows Server 2019), 3.6 added 2022, 3.7 removed only 1903, 1909
// and 2004 (kubernetes build/pause/CHANGELOG.md); 3.10 and 3.10.1 lack a
// Windows Server 2025 entry, and 3.10.2 has every entry of 3.10 plus 2025's,
// 10.0.26100 (kubernetes/kubernetes#136960, #138195;
// kubernetes-sigs/windows-testing#557 and capz/templates/windows-base.yaml at
// 6ae69880; containerd 05d3b315).
var pauseWindowsBuilds = map[string][]string{
	"registry.k8s.io/pause:3.10":   {"10.0.17763", "10.0.20348"},
	"registry.k8s.io/pause:3.10.1": {"10.0.17763", "10.0.20348"},
	"registry.k8s.io/pause:3.10.2": {"10.0.17763", "10.0.20348", "10.0.26100"},
	// The same manifest list, by its digest (DefaultPause).
	"registry.k8s.io/pause:3.10.2@sha256:f548e0e8e3dc1896ca956272154dde3314e8cc4fde0a57577ee9fa1c63f5baf4": {"10.0.17763", "10.0.20348", "10.0.26100"},
}

// TestDefaultPauseHasEveryRelease: the default pause image carries an entry
// for the build of every Windows Server release the provider accepts, so a
// Windows Server 2025 node does not fall back to the 2022 entry (which only
// process isolation tolerates). Adding a release to winversion, or changing
// the default, means checking the image's manifest list and this table.
func TestDefaultPauseHasEveryRelease(t *testing.T) {
	builds, known := pauseWindowsBuilds[DefaultPause]
	if !known {
		t.Fatalf("DefaultPause %s: add its manifest list's Windows builds to pauseWindowsBuilds, with the source", DefaultPause)
	}
	for _, r := range winversion.Releases {
		if !slices.Contains(builds, r.Build) {
			t.Errorf("DefaultPause %s has no Windows Server %s (%s) entry", DefaultPause, r.Version, r.Build)
		}
	}
	steps, err := ImageSteps(ImageConfig{KubernetesVersion: "v1.36.3", Containerd: testImageConfig().Containerd, Kubelet: testImageConfig().Kubelet,
		KubeProxy: testImageConfig().KubeProxy, KubeLogRunner: testImageConfig().KubeLogRunner, CNIPlugins: testImageConfig().CNIPlugins})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range steps {
		if s.Name == "containerd-service" && !strings.Contains(s.Script, "sandbox = ''"+DefaultPause+"''") {
			t.Errorf("the containerd configuration does not pin %s without pause_image:\n%s", DefaultPause, s.Script)
		}
	}
}

// TestImageStepsKeepVMwareTools: no image step stops or restarts the
// VMTools service, whose guest operations may be running the step (over
// vmtools a restart ends the step's own channel), and the tools.conf step
// is rerunnable.
func TestImageStepsKeepVMwareTools(t *testing.T) {
	steps, err := ImageSteps(testImageConfig())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range steps {
		lower := strings.ToLower(s.Script)
		for _, verb := range []string{"restart-service", "stop-service", "net stop", "sc.exe stop", "taskkill"} {
			for _, i := range allIndexes(lower, verb) {
				if line := lower[i:min(len(lower), i+80)]; strings.Contains(strings.SplitN(line, "\n", 2)[0], "vmtools") {
					t.Errorf("step %s stops VMware Tools: %q", s.Name, strings.SplitN(s.Script[i:], "\n", 2)[0])
				}
			}
		}
		if s.Name == "vmware-tools" {
			found = true
			if !s.Rerunnable {
				t.Error("the vmware-tools step is not rerunnable")
			}
		}
	}
	if !found {
		t.Fatal("no vmware-tools step")
	}
}

func allIndexes(s, sub string) []int {
	var out []int
	for i := 0; ; {
		j := strings.Index(s[i:], sub)
		if j < 0 {
			return out
		}
		out = append(out, i+j)
		i += j + 1
	}
}

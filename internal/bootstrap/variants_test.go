package bootstrap

import (
	"slices"
	"strings"
	"testing"
)

// TestOptionSetsGolden renders the scripts of every option set the golden
// files above do not: an image with no updates, online updates, SSH or
// images to pre-pull and containerd 1.7 (whose config.toml is version 2);
// online updates without WSUS and with an include list; a node with the
// "none" CNI in a time zone of its own; and the steps rendered on their
// own (sysprep, the WinRM HTTPS listener, the reboot, the Windows build,
// probe evidence with no logs). Together with image-steps.ps1 and
// join-steps-flannel.ps1 they hold every template of templates/ with each
// of its branches, and winsim's walk test (TestProviderScriptsModelled)
// parses and binds every script in them against the simulated host.
func TestOptionSetsGolden(t *testing.T) {
	minimal := testImageConfig()
	minimal.Updates, minimal.Online, minimal.SSHAuthorizedKey, minimal.PrepullImages, minimal.Additional = nil, nil, "", nil, nil
	minimal.Containerd.URL = "https://github.com/containerd/containerd/releases/download/v1.7.30/containerd-1.7.30-windows-amd64.tar.gz"
	minimal.Containerd.Path = DownloadPath(minimal.Containerd.URL)
	minimal.PauseImage = "registry.k8s.io/pause:3.10"
	steps, err := ImageSteps(minimal)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "image-steps-minimal.ps1", joinSteps(steps))

	mirrored := testImageConfig()
	mirrored.Registry = testRegistry()
	steps, err = ImageSteps(mirrored)
	if err != nil {
		t.Fatal(err)
	}
	var registrySteps []Step
	for _, s := range steps {
		if s.Name == "registry-hosts" || s.Name == "containerd-service" || s.Name == "prepull-images" {
			registrySteps = append(registrySteps, s)
		}
	}
	golden(t, "image-steps-registry.ps1", redactedSteps(registrySteps))

	online, err := onlineUpdateSteps(&OnlineUpdates{Categories: []string{"Updates"}, IncludeKBs: []string{"KB5070020", "KB5070021"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(online) != 1 {
		t.Fatalf("online updates without WSUS rendered %d steps, want 1 (no WSUS step)", len(online))
	}
	golden(t, "online-updates-no-wsus.ps1", joinSteps(online))

	cfg := testJoinConfig()
	cfg.CNI, cfg.CNIConfList, cfg.TimeZone = "none", nil, "Tokyo Standard Time"
	join, err := JoinSteps(cfg)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "join-steps-none.ps1", joinSteps(join))

	// Behind a proxy: the downloads through it (the update's host is in
	// no_proxy, so it goes direct), WinHTTP's, containerd's and the
	// kubelet's service environment.
	proxy := Proxy{HTTP: "http://proxy.example.com:3128", HTTPS: "http://proxy.example.com:3128",
		NoProxy: []string{"wsus.example.com", ".corp.example.com", "10.96.0.0/12"}}
	behind := testImageConfig()
	behind.Online, behind.SSHAuthorizedKey, behind.PrepullImages, behind.Additional = nil, "", nil, nil
	behind.Updates = behind.Updates[:1]
	behind.Updates[0].URL = "https://wsus.example.com/" + behind.Updates[0].URL[strings.LastIndexByte(behind.Updates[0].URL, '/')+1:]
	behind.Proxy = proxy
	steps, err = ImageSteps(behind)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "image-steps-proxy.ps1", joinSteps(steps))
	proxied := testJoinConfig()
	proxied.Proxy = proxy
	join, err = JoinSteps(proxied)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "join-steps-proxy.ps1", joinSteps(join))

	var single []Step
	sysprep, err := SysprepStep(UnattendConfig{TimeZone: "W. Europe Standard Time"})
	if err != nil {
		t.Fatal(err)
	}
	listener, err := HTTPSListenerStep("10.0.0.21", []string{"10.0.5.0/24", "192.0.2.7"})
	if err != nil {
		t.Fatal(err)
	}
	reboot, err := RebootStep()
	if err != nil {
		t.Fatal(err)
	}
	build, err := WindowsBuildStep()
	if err != nil {
		t.Fatal(err)
	}
	evidence, err := ProbeEvidenceStep(nil)
	if err != nil {
		t.Fatal(err)
	}
	domain, err := DomainJoinedStep("corp.example.test")
	if err != nil {
		t.Fatal(err)
	}
	single = append(single, sysprep, listener, reboot, build, evidence, domain)
	golden(t, "single-steps.ps1", joinSteps(single))
	if slices.ContainsFunc(single, func(s Step) bool { return s.Script == "" }) {
		t.Error("a single step rendered empty")
	}
}

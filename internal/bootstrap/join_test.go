package bootstrap

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"
)

func testJoinConfig() JoinConfig {
	return JoinConfig{
		NodeName: "win-0", NodeIP: "10.0.0.21",
		APIServer: "https://10.0.0.10:6443", ClusterCA: []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"),
		BootstrapToken: "abcdef.0123456789abcdef",
		ClusterDNS:     []string{"10.96.0.10"}, ClusterDomain: "cluster.local",
		ClusterCIDR: "10.244.0.0/16", ServiceCIDR: "10.96.0.0/12",
		KubeletAdmit: []string{"10.0.0.10", "10.244.0.0/16"}, RemoteLoginsOff: true,
		Labels: map[string]string{"node.kubernetes.io/windows-build": "10.0.20348", "example.com/pool": "web"},
		Taints: []corev1.Taint{{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}},
		CNI:    "flannel", CNIConfList: []byte(`{"cniVersion":"0.3.0","name":"flannel.4096","plugins":[{"type":"flannel"}]}`),
	}
}

func TestJoinStepsGolden(t *testing.T) {
	steps, err := JoinSteps(testJoinConfig())
	if err != nil {
		t.Fatal(err)
	}
	after, err := AfterReadySteps()
	if err != nil {
		t.Fatal(err)
	}
	repair, err := RepairSteps()
	if err != nil {
		t.Fatal(err)
	}
	evidence, err := ProbeEvidenceStep([]string{`C:\var\log\pods\kube-system_kube-proxy-windows-x2x4z_0d9b5c1e-1111-4222-8333-444455556666\kube-proxy\0.log`})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "join-steps-flannel.ps1", joinSteps(append(append(append(slices.Clone(steps), after...), repair...), evidence)))
	if after[0].Sensitive() {
		t.Errorf("step %s carries secrets", after[0].Name)
	}
	if !steps[0].Sensitive() || !slices.Contains(steps[0].Secrets, "abcdef.0123456789abcdef") || !slices.Contains(steps[0].Secrets, "0123456789abcdef") {
		t.Errorf("the step writing the bootstrap token does not carry it: %q", steps[0].Secrets)
	}
	for _, s := range steps[1:] {
		if s.Sensitive() {
			t.Errorf("step %s carries secrets", s.Name)
		}
	}
	cfg := testJoinConfig()
	cfg.CNI = "none"
	cfg.RemoteLoginsOff = false // a node reached over WinRM keeps its listener
	steps, err = JoinSteps(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range steps {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, " "); got != "join-files kubelet-firewall time-zone legacy-services kubelet-service" {
		t.Errorf("cni none steps = %s", got)
	}
}

// TestJoinStepsAntreaHostSetup: the antrea mode's host prerequisites run as
// a join step of their own before the kubelet's, which may restart the
// computer (the Hyper-V PowerShell module, TESTSIGNING); held as a golden
// file so winsim's walk test binds it.
func TestJoinStepsAntreaHostSetup(t *testing.T) {
	cfg := testJoinConfig()
	cfg.CNI = "antrea"
	steps, err := JoinSteps(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var setup Step
	for _, s := range steps {
		names = append(names, s.Name)
		if s.Name == "antrea-host-setup" {
			setup = s
		}
	}
	if got := strings.Join(names, " "); !strings.HasSuffix(got, "antrea-host-setup kubelet-service") {
		t.Errorf("antrea join steps = %s, want antrea-host-setup right before kubelet-service", got)
	}
	if !setup.MayReboot || !setup.Rerunnable || setup.Sensitive() {
		t.Errorf("antrea-host-setup: MayReboot %v Rerunnable %v secrets %d, want a rerunnable step that may reboot, without secrets", setup.MayReboot, setup.Rerunnable, len(setup.Secrets))
	}
	if !strings.Contains(setup.Script, RebootMarker) || !strings.Contains(setup.Script, "bcdedit.exe /set testsigning on") {
		t.Errorf("antrea-host-setup does not set TESTSIGNING and ask for a restart:\n%s", setup.Script)
	}
	golden(t, "join-steps-antrea-host-setup.ps1", joinSteps([]Step{setup}))
}

func TestKubeletCommandUsesCurrentFlagsOnly(t *testing.T) {
	cmd := testJoinConfig().KubeletCommand()
	for _, removed := range []string{"--network-plugin", "--cni-bin-dir", "--cni-conf-dir", "--image-pull-progress-deadline",
		"--pod-infra-container-image", "--resolv-conf", "--cluster-dns", "--kubeconfig=c:"} {
		if strings.Contains(cmd, removed) {
			t.Errorf("kubelet command uses %s: %s", removed, cmd)
		}
	}
	for _, deprecated := range []string{"--register-with-taints", "--container-runtime-endpoint"} {
		if strings.Contains(cmd, deprecated) {
			t.Errorf("kubelet command uses deprecated %s (it belongs in the configuration file): %s", deprecated, cmd)
		}
	}
	for _, want := range []string{"--node-labels=example.com/pool=web,node.kubernetes.io/windows-build=10.0.20348",
		"--node-ip=10.0.0.21", "--hostname-override=win-0", "--bootstrap-kubeconfig="} {
		if !strings.Contains(cmd, want) {
			t.Errorf("kubelet command lacks %s: %s", want, cmd)
		}
	}
}

func TestKubeletConfigurationAndFlannel(t *testing.T) {
	cfg := testJoinConfig().withDefaults()
	kc, err := cfg.kubeletConfiguration()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"clusterDNS:\n- 10.96.0.10", "clusterDomain: cluster.local", "cgroupsPerQOS: false",
		"enforceNodeAllocatable: []", "kind: KubeletConfiguration", "clientCAFile: C:\\k\\ca.crt"} {
		if !strings.Contains(string(kc), want) {
			t.Errorf("kubelet configuration lacks %q:\n%s", want, kc)
		}
	}
	// The kubelet's own types must accept every field.
	var typed kubeletv1beta1.KubeletConfiguration
	if err := yaml.UnmarshalStrict(kc, &typed); err != nil {
		t.Errorf("the kubelet configuration does not decode strictly: %v", err)
	}
	if len(typed.RegisterWithTaints) != 1 || typed.RegisterWithTaints[0].Key != "os" || typed.RegisterWithTaints[0].Value != "windows" ||
		typed.RegisterWithTaints[0].Effect != "NoSchedule" {
		t.Errorf("registerWithTaints = %+v, want os=windows:NoSchedule", typed.RegisterWithTaints)
	}
	if typed.ContainerRuntimeEndpoint != ContainerdPipe {
		t.Errorf("containerRuntimeEndpoint = %q", typed.ContainerRuntimeEndpoint)
	}
	if typed.CgroupsPerQOS == nil || *typed.CgroupsPerQOS || typed.EnforceNodeAllocatable == nil || len(typed.EnforceNodeAllocatable) != 0 {
		t.Errorf("Windows settings lost: cgroupsPerQOS=%v enforceNodeAllocatable=%v", typed.CgroupsPerQOS, typed.EnforceNodeAllocatable)
	}
	kubeconfig, err := cfg.bootstrapKubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(kubeconfig), "token: abcdef.0123456789abcdef") || strings.Contains(string(kubeconfig), "client-key") {
		t.Errorf("bootstrap kubeconfig is not token-only:\n%s", kubeconfig)
	}
}

func TestJoinConfigValidation(t *testing.T) {
	cases := map[string]func(*JoinConfig){
		"name":    func(c *JoinConfig) { c.NodeName = "Win_0" },
		"ip":      func(c *JoinConfig) { c.NodeIP = "10.0.0" },
		"server":  func(c *JoinConfig) { c.APIServer = "http://x" },
		"token":   func(c *JoinConfig) { c.BootstrapToken = "admin-token" },
		"dns":     func(c *JoinConfig) { c.ClusterDNS = nil },
		"cni":     func(c *JoinConfig) { c.CNI = "weave" }, // no such mode
		"flannel": func(c *JoinConfig) { c.ClusterCIDR = "" },
		"ca":      func(c *JoinConfig) { c.ClusterCA = nil },
	}
	for name, mutate := range cases {
		cfg := testJoinConfig()
		mutate(&cfg)
		if _, err := JoinSteps(cfg); err == nil {
			t.Errorf("%s: JoinSteps accepted invalid input", name)
		}
	}
}

// TestKubeletServiceAndNativeExitCodes: the kubelet runs under
// kube-log-runner as a native service that depends on containerd and is
// restarted by the SCM, and no step runs sc.exe without checking its exit
// code (Windows PowerShell 5.1 does not stop on a native program's failure,
// even with $ErrorActionPreference = 'Stop').
func TestKubeletServiceAndNativeExitCodes(t *testing.T) {
	cfg := testJoinConfig()
	cmd := cfg.KubeletServiceCommand()
	for _, want := range []string{`C:\k\kube-log-runner.exe --log-file=C:\var\log\kubelet\kubelet.log --log-file-size=10Mi --log-file-age=168h C:\k\kubelet.exe --windows-service`} {
		if !strings.HasPrefix(cmd, want) {
			t.Errorf("kubelet service command = %s, want it to start with %s", cmd, want)
		}
	}
	steps, err := JoinSteps(cfg)
	if err != nil {
		t.Fatal(err)
	}
	all := joinSteps(steps)
	for _, want := range []string{"depend= 'containerd'", "sc.exe failure 'kubelet' reset= '86400' actions= 'restart/10000/restart/10000/restart/30000'",
		"sc.exe delete 'flanneld'", "sc.exe delete 'kube-proxy'", `C:\etc\cni\net.d\10-flannel.conflist`, `C:\opt\cni\bin\flannel.exe`} {
		if !strings.Contains(all, want) {
			t.Errorf("join steps lack %q", want)
		}
	}
	checkNativeExitCodes(t, all)
	if code := withoutComments(all); strings.Contains(code, "Remove-Service") || strings.Contains(code, "New-Service") {
		t.Error("join steps use Remove-Service (not in Windows PowerShell 5.1) or New-Service (no dependencies, no recovery)")
	}
}

// checkNativeExitCodes fails for a line running sc.exe, tar.exe, ctr.exe,
// icacls.exe or a program by path (& '...exe') not followed within two
// lines by a $LASTEXITCODE check.
func checkNativeExitCodes(t *testing.T, script string) {
	t.Helper()
	lines := strings.Split(script, "\n")
	for i, l := range lines {
		trimmed := strings.TrimSpace(l)
		if strings.HasPrefix(trimmed, "#") {
			continue
		}
		native, gui := false, false
		for _, p := range []string{"sc.exe ", "tar.exe ", "icacls.exe ", "ctr.exe", ".exe' "} {
			if strings.Contains(l, p) {
				native = true
			}
		}
		// GUI-subsystem programs: PowerShell's & does not wait for them and
		// sets no $LASTEXITCODE (winsim doc.go, "Programs and their subsystem").
		for _, p := range []string{"wusa.exe", "sysprep.exe"} {
			lower := strings.ToLower(trimmed)
			if strings.Contains(lower, p) && (strings.HasPrefix(lower, "&") || strings.HasPrefix(lower, p) || strings.Contains(l, "Start-Process")) {
				gui = true
			}
		}
		if (!native && !gui) || strings.Contains(l, "Test-Path") || strings.Contains(l, "Get-FileHash") || strings.Contains(l, "Invoke-WebRequest") || strings.Contains(l, "throw") || strings.Contains(l, "Move-Item") {
			continue
		}
		next := strings.Join(lines[i:min(i+3, len(lines))], "\n")
		switch {
		case gui && !strings.Contains(l, "Start-Process"):
			t.Errorf("line %d runs a GUI-subsystem program PowerShell does not wait for; use Start-Process -Wait -PassThru: %s", i+1, l)
		case strings.Contains(l, "Start-Process") && (!strings.Contains(l, "-Wait") || !strings.Contains(l, "-PassThru") || !strings.Contains(next, ".ExitCode")):
			t.Errorf("line %d starts a program without waiting for it and checking its ExitCode (Start-Process -Wait -PassThru): %s", i+1, l)
		case !strings.Contains(l, "Start-Process") && !strings.Contains(next, "$LASTEXITCODE"):
			t.Errorf("line %d runs a native program without checking $LASTEXITCODE: %s", i+1, l)
		}
	}
}

func withoutComments(script string) string {
	var out []string
	for _, l := range strings.Split(script, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestJoinSetsTheTimeZone: the join's time-zone step sets the configured ID
// (UTC when none), and an ID Windows does not have is refused before any
// script is rendered.
func TestJoinSetsTheTimeZone(t *testing.T) {
	for _, c := range []struct{ zone, want string }{{"", "UTC"}, {"Tokyo Standard Time", "Tokyo Standard Time"}} {
		cfg := testJoinConfig()
		cfg.TimeZone = c.zone
		steps, err := JoinSteps(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var script string
		for _, s := range steps {
			if s.Name == "time-zone" {
				script = s.Script
			}
		}
		if !strings.Contains(script, "Set-TimeZone -Id '"+c.want+"'") {
			t.Errorf("time zone %q: the time-zone step is\n%s", c.zone, script)
		}
	}
	cfg := testJoinConfig()
	cfg.TimeZone = "Europe/London"
	if _, err := JoinSteps(cfg); err == nil || !strings.Contains(err.Error(), "Europe/London") {
		t.Errorf("an IANA name: err = %v", err)
	}
}

// TestKubeletFirewallScope: the join scopes the kubelet's rule to the
// addresses it is given, and refuses a join with none or with text that is
// no address or CIDR (it lands in -RemoteAddress).
func TestKubeletFirewallScope(t *testing.T) {
	steps, err := JoinSteps(testJoinConfig())
	if err != nil {
		t.Fatal(err)
	}
	var script string
	for _, s := range steps {
		if s.Name == "kubelet-firewall" {
			script = s.Script
		}
	}
	for _, want := range []string{"$admit = @('10.0.0.10', '10.244.0.0/16')", "Set-NetFirewallRule -Name '" + KubeletFirewall + "' -RemoteAddress $admit -Enabled True"} {
		if !strings.Contains(script, want) {
			t.Errorf("kubelet-firewall step lacks %q:\n%s", want, script)
		}
	}
	for _, admit := range [][]string{nil, {"10.0.0.10", "any"}, {"10.0.0.0/33"}} {
		cfg := testJoinConfig()
		cfg.KubeletAdmit = admit
		if _, err := JoinSteps(cfg); err == nil || !strings.Contains(err.Error(), "kubelet") {
			t.Errorf("KubeletAdmit %q: err = %v, want a refusal naming the kubelet's rule", admit, err)
		}
	}
}

// TestHTTPSListenerScope: the HTTPS listener's rule admits the management
// addresses given, and the step refuses none or text no address or CIDR.
func TestHTTPSListenerScope(t *testing.T) {
	step, err := HTTPSListenerStep("10.0.0.21", []string{"10.0.5.0/24", "192.0.2.7"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "-LocalPort 5986 -Action Allow -Profile Any -RemoteAddress @('10.0.5.0/24', '192.0.2.7')"; !strings.Contains(step.Script, want) {
		t.Errorf("listener step lacks %q:\n%s", want, step.Script)
	}
	for _, admit := range [][]string{nil, {"Any"}, {"10.0.5.0/24; Remove-Item C:\\"}} {
		if _, err := HTTPSListenerStep("10.0.0.21", admit); err == nil {
			t.Errorf("admit %q: accepted", admit)
		}
	}
}

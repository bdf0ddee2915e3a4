package kubeletsim_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/kubeletsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/kubeletsim/kubeletsimtest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/linuxnode"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// Where the test puts Antrea's Windows programs (the antrea-windows image's
// layout: /k/antrea/bin, /openvswitch/usr/{bin,sbin}).
const (
	antreaAgentExe = `C:\k\antrea\bin\antrea-agent.exe`
	ovsdbToolExe   = `C:\openvswitch\usr\bin\ovsdb-tool.exe`
	ovsVsctlExe    = `C:\openvswitch\usr\bin\ovs-vsctl.exe`
	ovsdbServerExe = `C:\openvswitch\usr\sbin\ovsdb-server.exe`
	ovsVswitchdExe = `C:\openvswitch\usr\sbin\ovs-vswitchd.exe`
	ovsSchema      = `C:\openvswitch\usr\share\openvswitch\vswitch.ovsschema`
	ovsDB          = `C:\openvswitch\etc\openvswitch\conf.db`
	antreaConf     = `C:\etc\antrea\antrea-agent.conf`
)

// TestAntreaAgent runs Antrea's Windows agent on a joined node against the
// real API server with the Linux side's antrea-agent ServiceAccount (its
// token and CA where Install-WindowsCNI.ps1 copies them): it refuses what
// Antrea refuses on Windows and what the host lacks (OVS, the OVS
// extension), then makes the Transparent HNS network, the bridge, a route to
// the Linux node's pod CIDR and AntreaProxy's group for kube-dns, through
// which a pod of the node resolves a name.
func TestAntreaAgent(t *testing.T) {
	s := cluster(t)
	cs := s.ControlPlane.Client
	ctx := context.Background()
	remove, err := s.LinuxNode.InstallAntrea(ctx, linuxnode.Antrea{Version: "v2.2.0", TrafficEncapMode: "encap"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = remove(context.Background()) })
	const name = "win-antrea"
	n := newNode(t, name, hostOptions{})
	if err := n.join(t, joinConfig(s, name, createBootstrapToken(t, cs))); err != nil {
		t.Fatalf("join: %v\n%s", err, n.kubeletLog())
	}
	node := waitForNode(t, cs, name, "given a pod CIDR", func(nd *corev1.Node) bool { return nd.Spec.PodCIDR != "" })
	tr, err := cs.CoreV1().ServiceAccounts(linuxnode.AntreaNamespace).CreateToken(ctx, linuxnode.AntreaAgent, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		`C:\var\run\secrets\kubernetes.io\serviceaccount\token`:  tr.Status.Token,
		`C:\var\run\secrets\kubernetes.io\serviceaccount\ca.crt`: string(s.CA.CertPEM),
		antreaAgentExe: kubeletsimtest.Executable("antrea-agent", "v2.2.0"),
		ovsdbToolExe:   kubeletsimtest.Executable("ovsdb-tool", "3.1.3"),
		ovsVsctlExe:    kubeletsimtest.Executable("ovs-vsctl", "3.1.3"),
		ovsdbServerExe: kubeletsimtest.Executable("ovsdb-server", "3.1.3"),
		ovsVswitchdExe: kubeletsimtest.Executable("ovs-vswitchd", "3.1.3"),
		ovsSchema:      `{"name": "Open_vSwitch"}`,
	}
	for path, data := range files {
		if err := n.Host.WriteFile(path, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	writeConf := func(extra string) {
		t.Helper()
		conf := "featureGates:\nkubeAPIServerOverride: \"" + s.ControlPlane.Server + "\"\nantreaProxy:\n  enable: true\n  proxyAll: true\n" + extra
		if err := n.Host.WriteFile(antreaConf, []byte(conf)); err != nil {
			t.Fatal(err)
		}
	}
	agentArgs := []string{"--config=" + antreaConf, "--logtostderr=false", "--log_dir=c:/var/log/antrea", "--alsologtostderr", "--log_file_max_size=100", "--log_file_max_num=4", "--v=0"}
	env := map[string]string{"NODE_NAME": name}

	t.Run("unsupported on Windows", func(t *testing.T) {
		writeConf("trafficEncryptionMode: wireguard\nfeatureGates:\n  Egress: true\n")
		code, out := runAgent(t, n.Host, antreaAgentExe, agentArgs, env, 30*time.Second)
		if want := "Failed to validate: unsupported features on Windows: {Egress, TrafficEncryptionMode: wireguard}"; code != 255 || !strings.Contains(out, want) {
			t.Errorf("exit %d:\n%s\nwant %s", code, out, want)
		}
	})
	writeConf("")
	t.Run("without OVS", func(t *testing.T) {
		code, out := runAgent(t, n.Host, antreaAgentExe, agentArgs, env, 30*time.Second)
		if code != 255 || !strings.Contains(out, "error connecting OVSDB: ovsdb-server is not running") {
			t.Errorf("exit %d:\n%s", code, out)
		}
	})

	// Run-AntreaOVS.ps1's steps, the daemons in the foreground.
	if code, out := runAgent(t, n.Host, ovsdbToolExe, []string{"create", ovsDB, ovsSchema}, nil, 10*time.Second); code != 0 {
		t.Fatalf("ovsdb-tool create: %d %s", code, out)
	}
	if code, out := runAgent(t, n.Host, ovsdbToolExe, []string{"create", ovsDB, ovsSchema}, nil, 10*time.Second); code != 1 || !strings.Contains(out, "create failed (File exists)") {
		t.Errorf("ovsdb-tool create again: %d %s", code, out)
	}
	if code, out := runAgent(t, n.Host, ovsVsctlExe, []string{"--no-wait", "init"}, nil, 10*time.Second); code != 1 || !strings.Contains(out, "database connection failed") {
		t.Errorf("ovs-vsctl without ovsdb-server: %d %s", code, out)
	}
	// startOVS runs ovsdb-server and ovs-vswitchd in the foreground until
	// the returned stop, which waits for both to exit.
	startOVS := func() (stop func()) {
		ovsCtx, cancel := context.WithCancel(ctx)
		var dbOut, vsOut syncBuffer
		dbDone, vsDone := make(chan int, 1), make(chan int, 1)
		go func() {
			dbDone <- n.Host.Run(ovsCtx, &winsim.Process{Path: ovsdbServerExe, Args: []string{ovsDB, "-vfile:info", "--remote=punix:db.sock", "--log-file=/var/log/antrea/openvswitch/ovsdb-server.log", "--pidfile"}, Stderr: &dbOut})
		}()
		waitFor(t, "ovsdb-server serving", func() bool { return n.Host.FileExists(`C:\openvswitch\var\run\openvswitch\db.sock`) }, dbDone, &dbOut)
		if code, out := runAgent(t, n.Host, ovsVsctlExe, []string{"--no-wait", "init"}, nil, 10*time.Second); code != 0 {
			t.Errorf("ovs-vsctl init: %d %s", code, out)
		}
		go func() {
			vsDone <- n.Host.Run(ovsCtx, &winsim.Process{Path: ovsVswitchdExe, Args: []string{"--log-file=/var/log/antrea/openvswitch/ovs-vswitchd.log", "--pidfile", "-vfile:info"}, Stderr: &vsOut})
		}()
		waitFor(t, "ovs-vswitchd running", func() bool { return n.Host.FileExists(`C:\openvswitch\var\run\openvswitch\ovs-vswitchd.pid`) }, vsDone, &vsOut)
		return func() { cancel(); <-dbDone; <-vsDone }
	}
	stopOVS := startOVS()
	t.Run("without the Hyper-V PowerShell module", func(t *testing.T) {
		code, out := runAgent(t, n.Host, antreaAgentExe, agentArgs, env, 30*time.Second)
		if code != 255 || !strings.Contains(out, "The term 'Get-VMSwitch' is not recognized") {
			t.Errorf("exit %d:\n%s", code, out)
		}
	})
	// The module, as the mode's antrea-host-setup join step installs it
	// (the feature takes effect at the next boot).
	stopOVS()
	n.run(t, "Install-WindowsFeature -Name 'Hyper-V-PowerShell' | Out-Null")
	n.Host.Reboot()
	stopOVS = startOVS()
	defer stopOVS()

	t.Run("without the OVS extension", func(t *testing.T) {
		code, out := runAgent(t, n.Host, antreaAgentExe, agentArgs, env, 30*time.Second)
		if code != 255 || !strings.Contains(out, "the Open vSwitch Extension is not installed") {
			t.Errorf("exit %d:\n%s", code, out)
		}
	})
	if err := winsim.UpdateOVS(n.Host, func(st *winsim.OVSState) error { st.ExtensionInstalled = true; return nil }); err != nil {
		t.Fatal(err)
	}
	agentCtx, stopAgent := context.WithCancel(ctx)
	defer stopAgent()
	var out syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- n.Host.Run(agentCtx, &winsim.Process{Path: antreaAgentExe, Args: agentArgs, Env: env, Stderr: &out})
	}()
	waitFor(t, "antrea-agent started", func() bool { return strings.Contains(out.String(), "Antrea agent started") }, done, &out)
	nets := winsim.HNSNetworks(n.Host)
	if len(nets) != 1 || nets[0].Name != "antrea-hnsnetwork" || nets[0].Type != "Transparent" || nets[0].AddressPrefix != node.Spec.PodCIDR {
		t.Errorf("HNS networks = %+v, want antrea-hnsnetwork (Transparent, %s)", nets, node.Spec.PodCIDR)
	}
	waitFor(t, "the bridge, the route to the Linux node and kube-dns's group", func() bool {
		st := winsim.ReadOVS(n.Host)
		return st.HasBridge("br-int") && st.Routes[linuxnode.PodCIDR] == "antrea-tun0" && slices.ContainsFunc(st.ServiceGroups, func(g winsim.OVSServiceGroup) bool {
			return g.VIP == "10.96.0.10" && g.Protocol == "UDP" && g.Port == 53 && slices.Equal(g.Endpoints, []string{linuxnode.DNSPodIP + ":53"})
		})
	}, done, &out)
	// A pod's DNS query: kube-dns's ClusterIP, AntreaProxy's group, the
	// route to the Linux node, CoreDNS.
	nodeIP := ""
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			nodeIP = a.Address
		}
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	addrs, err := kubeletsim.PodResolve(rctx, n.Host, s.Overlay, nodeIP, node.Spec.PodCIDR, "kubernetes.default.svc.cluster.local.")
	if err != nil || !slices.Equal(addrs, []string{"10.96.0.1"}) {
		t.Errorf("resolving through the antrea node's pod network: %v %v", addrs, err)
	}
	stopAgent()
	<-done
	if n.Host.FileExists(`C:\ProgramData\winsim\antrea-cni-server`) {
		t.Error("the agent's CNI server outlived the agent")
	}
}

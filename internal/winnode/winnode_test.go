package winnode_test

import (
	"context"
	"encoding/base64"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	vimtypes "github.com/vmware/govmomi/vim25/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/adminpass"
	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/guest"
	"github.com/wincluster/terraform-provider-windows/internal/guest/guesttest"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/remote"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
	"github.com/wincluster/terraform-provider-windows/internal/winnode"
)

var errBoom = errors.New("boom")

const joinSteps = "windows-build,join-files,time-zone,legacy-services,kubelet-service"

// allSteps are a whole join's: the join steps, then the clean-up once the
// Node is Ready and its agents run.
const allSteps = joinSteps + ",join-cleanup"

// TestCreate runs a node's create against the in-memory vCenter, cluster and
// guest, failing it at every stage: the error names the stage (the texts the
// acceptance tests match), the VM is reported the moment it exists and
// before anything else can fail, the bootstrap token never outlives the
// create, and the guest's transport is closed.
func TestCreate(t *testing.T) {
	cases := []struct {
		name  string
		setup func(w *world, spec *winnode.Spec)
		want  string // regexp the error matches; "" for success
		noVM  bool   // the failure comes before the VM exists
		steps string // the guest steps run; "" when none
		// tokenLeft: the token's own deletion failed, so it is left.
		tokenLeft bool
	}{
		{name: "joins", steps: allSteps},
		{name: "clone", setup: func(w *world, _ *winnode.Spec) { w.vs.fail["CloneNode"] = errBoom },
			want: `^cloning /dc/vm/templates/win2022: boom$`, noVM: true},
		{name: "template missing", setup: func(_ *world, s *winnode.Spec) { s.Template = "/dc/vm/templates/gone" },
			want: `^cloning /dc/vm/templates/gone: virtual machine /dc/vm/templates/gone not found$`, noVM: true},
		{name: "power on", setup: func(w *world, _ *winnode.Spec) { w.vs.fail["PowerOn"] = errBoom }, want: `^powering on: boom$`},
		{name: "customization", setup: func(w *world, _ *winnode.Spec) { w.vs.fail["WaitForCustomization"] = errBoom },
			want: `^guest customization: boom$`},
		{name: "IP", setup: func(w *world, _ *winnode.Spec) { w.vs.fail["WaitForIP"] = errBoom },
			want: `^waiting for the guest's IP address: boom$`},
		{name: "cluster network", setup: func(w *world, _ *winnode.Spec) { w.k.fail["DiscoverNetwork"] = errBoom },
			want: `^discovering the cluster: boom$`},
		{name: "no cluster DNS", setup: func(w *world, _ *winnode.Spec) { w.k.network.DNSServiceIP = "" },
			want: `^discovering the cluster: no DNS Service found in kube-system .*set cluster_dns$`},
		{name: "no cluster CA", setup: func(w *world, _ *winnode.Spec) { w.k.fail["ClusterCA"] = errBoom },
			want: `^discovering the cluster: boom$`},
		{name: "flannel without a pod CIDR", setup: func(w *world, _ *winnode.Spec) { w.k.network.ClusterCIDRs = nil },
			want: `^discovering the cluster: flannel needs the cluster \(pod\) CIDR.*set cluster_cidr$`},
		{name: "networking mode", setup: func(w *world, _ *winnode.Spec) { w.k.fail["ObservedNetworkingMode"] = errBoom },
			want: `^discovering the cluster: boom$`},
		{name: "connect", setup: func(w *world, _ *winnode.Spec) { w.g.ConnectErrs = []error{errBoom} },
			want: `^connecting to the guest: boom$`},
		{name: "windows-build step", setup: func(w *world, _ *winnode.Spec) {
			w.g.Steps["windows-build"] = guesttest.Reply{ExitCode: 1, Stderr: "Get-ItemProperty : Access is denied"}
		}, want: `^join step "windows-build" exited with code 1:\nGet-ItemProperty : Access is denied$`, steps: "windows-build"},
		{name: "windows build unreadable", setup: func(w *world, _ *winnode.Spec) {
			w.g.Steps["windows-build"] = guesttest.Reply{Stdout: "garbage\r\n"}
		}, want: `^reading the Windows build: the guest did not report its Windows build\n\ngarbage$`, steps: "windows-build"},
		{name: "Node name taken by a live machine", setup: func(w *world, _ *winnode.Spec) {
			other := w.vs.add("/dc/vm/other/win-1", &vsphere.VMInfo{VM: vsphere.VM{Name: "win-1", BIOSUUID: "4211bbbb-0000-0000-0000-000000000001"}})
			w.k.nodes["win-1"] = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-1"}, Spec: corev1.NodeSpec{ProviderID: "vsphere://" + other.BIOSUUID}}
		}, want: `^checking the Node name: Node "win-1" belongs to another machine \(providerID vsphere://4211bbbb-0000-0000-0000-000000000001; .*nothing was deleted\. Give this node another name`,
			steps: "windows-build"},
		{name: "Node name taken outside vSphere", setup: func(w *world, _ *winnode.Spec) {
			w.k.nodes["win-1"] = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-1"}, Spec: corev1.NodeSpec{ProviderID: "aws:///eu-west-1a/i-0abc"}}
		}, want: `^checking the Node name: Node "win-1" belongs to another machine \(providerID aws:///eu-west-1a/i-0abc;.*nothing was deleted`, steps: "windows-build"},
		{name: "bootstrap token", setup: func(w *world, _ *winnode.Spec) { w.k.fail["CreateBootstrapToken"] = errBoom },
			want: `^creating a bootstrap token: boom$`, steps: "windows-build"},
		{name: "join-files step", setup: func(w *world, _ *winnode.Spec) {
			w.g.Steps["join-files"] = guesttest.Reply{ExitCode: 1, Stderr: `Access to the path 'C:\k\bootstrap-kubeconfig' is denied.`}
		}, want: `^join step "join-files" exited with code 1:\nAccess to the path 'C:\\k\\bootstrap-kubeconfig' is denied\.$`, steps: "windows-build,join-files"},
		{name: "legacy-services step", setup: func(w *world, _ *winnode.Spec) {
			w.g.Steps["legacy-services"] = guesttest.Reply{Err: errors.New("wsman: connection reset")}
		}, want: `^join step "legacy-services": wsman: connection reset$`, steps: "windows-build,join-files,time-zone,legacy-services"},
		{name: "kubelet-service step", setup: func(w *world, _ *winnode.Spec) {
			w.g.Steps["kubelet-service"] = guesttest.Reply{ExitCode: 1, Stderr: "Start-Service : Service 'kubelet' cannot be started: simulated failure"}
		}, want: `^join step "kubelet-service" exited with code 1:\nStart-Service : Service 'kubelet' cannot be started: simulated failure$`, steps: joinSteps},
		{name: "Node never registers", setup: func(w *world, _ *winnode.Spec) { w.g.Steps["kubelet-service"] = guesttest.Reply{} },
			want:  `(?s)^waiting for the Node to become Ready: Node "win-1" never registered.*\n\nLast lines of C:\\var\\log\\kubelet\\kubelet.log:\nI0101 kubelet starting\nE0101 bootstrap: token \(sensitive value\) rejected: Unauthorized$`,
			steps: joinSteps},
		{name: "Node not Ready", setup: func(w *world, _ *winnode.Spec) { w.k.neverReady = true },
			want: `(?s)^waiting for the Node to become Ready: Node "win-1" registered but is not Ready.*Last lines of`, steps: joinSteps},
		{name: "token deletion", setup: func(w *world, _ *winnode.Spec) { w.k.fail["DeleteBootstrapToken"] = errBoom },
			want: `^deleting the bootstrap token: boom$`, steps: joinSteps, tokenLeft: true},
		{name: "node settings", setup: func(w *world, _ *winnode.Spec) { w.k.fail["ApplyNodeSettings"] = errBoom },
			want: `^setting the Node's providerID, labels and taints: boom$`, steps: joinSteps},
		{name: "node agents", setup: func(w *world, _ *winnode.Spec) { w.k.fail["WaitForAgentsReady"] = errBoom },
			want: `^waiting for the node agents to run: boom$`, steps: joinSteps},
		{name: "network probe", setup: func(w *world, _ *winnode.Spec) {
			w.k.probeErr = &kube.ProbeError{Node: "win-1", Path: kube.ProbePath{What: "cluster DNS and ClusterIP Service", Output: "DNS: lookup kube-dns.kube-system.svc.cluster.local: no such host"},
				Expected: "the name resolves", Evidence: "Service kube-system/kube-dns has no ready endpoints"}
			// The host's evidence, read over the transport and redacted.
			w.g.Steps["probe-evidence"] = guesttest.Reply{Stdout: "--- Get-HnsPolicyList\n--- last lines of kube-proxy.log\nE0101 token tok001." + tokenSecret + "\n"}
		}, want: `(?s)^proving the node's network path: network probe of node win-1: cluster DNS and ClusterIP Service failed: DNS: .*\nevidence: Service kube-system/kube-dns has no ready endpoints\nhost evidence \(HNS and the node agents' last log lines\):\n--- Get-HnsPolicyList\n--- last lines of kube-proxy.log\nE0101 token \(sensitive value\)$`,
			steps: allSteps + ",probe-evidence"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			spec := testSpec()
			if c.setup != nil {
				c.setup(w, &spec)
			}
			var reported []winnode.Identity
			res, err := w.m.Create(t.Context(), spec, func(id winnode.Identity) {
				if calls := w.vs.Calls(); !slices.Equal(calls, []string{"FindClone /dc/vm/nodes/win-1", "CloneNode win-1"}) {
					t.Errorf("onVM after %v: it must come before anything else can fail", calls)
				}
				reported = append(reported, id)
			})
			checkErr(t, err, c.want)
			if c.noVM {
				if len(reported) != 0 || res.VMID != "" {
					t.Errorf("no VM exists, yet onVM got %v and the result names %q", reported, res.VMID)
				}
			} else if len(reported) != 1 || reported[0] != res.Identity || res.VMID == "" {
				t.Errorf("onVM got %v, result %+v: want the VM reported once and kept in the result", reported, res.Identity)
			}
			if live := w.k.liveTokens(); len(live) != 0 && !c.tokenLeft {
				t.Errorf("bootstrap tokens %v outlived the create", live)
			}
			if got := strings.Join(w.g.Ran(), ","); got != c.steps {
				t.Errorf("steps run: %q, want %q", got, c.steps)
			}
			if n := w.g.Open(); n != 0 {
				t.Errorf("%d transports left open", n)
			}
		})
	}
}

func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("no error, want %s", want)
	}
	if !regexp.MustCompile(want).MatchString(err.Error()) {
		t.Errorf("error:\n%s\nwant it to match %s", err, want)
	}
	var se *guest.StageError
	if !errors.As(err, &se) {
		t.Errorf("%T is not a *guest.StageError", err)
	}
}

// TestCreateResult checks what a successful create reports and leaves: the
// VM as customized, the Node with our providerID, labels and taints, the
// token deleted once the Node is Ready and before anything else, the agents
// of the networking mode awaited.
func TestCreateResult(t *testing.T) {
	w := newWorld(t)
	// The agents are awaited (from Ready on, counting the pods this
	// kubelet runs: kube.RegisteredByKubeletAt).
	w.k.agentsWatched = make(chan struct{})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	res, err := w.m.Create(ctx, testSpec(), nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.k.agentsWatched:
	default:
		t.Error("the create did not await the node agents")
	}
	if r := w.vs.last; r.Sysprep.ComputerName != "WIN-1" || r.Sysprep.AdminPassword != adminpass.ForNode("N0de-Passw0rd!", "win-1", "Administrator") || r.Folder != "/dc/vm/nodes" ||
		r.NumCPUs != 4 || r.MemoryMB != 8192 || r.DiskSizeGB != 80 || !strings.Contains(r.Annotation, "win-1") {
		t.Errorf("clone request %+v", r)
	}
	wantPID := "vsphere://" + strings.ToLower(res.BIOSUUID)
	if res.IP != "192.0.2.21" || res.WindowsBuildFull != guesttest.DefaultBuild || res.CNI != "flannel" || res.SSHHostKey != "" {
		t.Errorf("result %+v", res)
	}
	n := w.k.node("win-1")
	if n == nil || res.Node == nil || n.Spec.ProviderID != wantPID || res.Node.Spec.ProviderID != wantPID {
		t.Fatalf("Node %+v, result Node %+v: want providerID %s", n, res.Node, wantPID)
	}
	if n.Labels[winnode.LabelWindowsBuild] != "10.0.20348" || n.Labels["example.com/pool"] != "web" {
		t.Errorf("labels %v", n.Labels)
	}
	if len(n.Spec.Taints) != 1 || n.Spec.Taints[0].ToString() != "os=windows:NoSchedule" {
		t.Errorf("taints %v", n.Spec.Taints)
	}
	if res.Node.Spec.PodCIDR != "10.244.1.0/24" {
		t.Errorf("pod CIDR %q, want the one allocated after Ready", res.Node.Spec.PodCIDR)
	}
	if !w.k.before("WaitForNodeReady", "DeleteBootstrapToken") || !w.k.before("WaitForNodeReady", "ApplyNodeSettings") {
		t.Errorf("cluster calls %v: the token goes, and the settings come, once the Node is Ready", w.k.Calls())
	}
	if !slices.Contains(w.k.Calls(), "WaitForAgentsReady win-1 kube-system kube-proxy,flannel") {
		t.Errorf("cluster calls %v: want the flannel agents awaited in kube-system", w.k.Calls())
	}
	wantProgress := "clone,power on,customize,wait for IP,discover cluster,connect,bootstrap token,step join-files,step time-zone,step legacy-services,step kubelet-service,wait for Ready,node settings,wait for node agents,step join-cleanup,network probe"
	if got := strings.Join(w.progress, ","); got != wantProgress {
		t.Errorf("progress %s\nwant     %s", got, wantProgress)
	}
}

// TestCreateCancelled cancels a create at several points: the error says
// where and that it was cancelled, the VM stays tracked, and the token is
// deleted even though the context is gone.
func TestCreateCancelled(t *testing.T) {
	cases := []struct {
		name  string
		at    func(w *world, cancel func())
		stage string
		token bool // a token was created (and must be gone)
		node  bool // the Node exists after
	}{
		{"customization", func(w *world, cancel func()) { w.vs.at["WaitForCustomization"] = cancel }, "guest customization", false, false},
		{"join step", func(w *world, cancel func()) {
			w.g.Steps["join-files"] = guesttest.Reply{Do: func(context.Context) { cancel() }, Hang: true}
		}, `join step "join-files"`, true, false},
		{"Ready wait", func(w *world, cancel func()) { w.k.at["WaitForNodeReady"] = cancel }, "waiting for the Node to become Ready", true, true},
		{"agents", func(w *world, cancel func()) {
			applied := w.k.settingsApplied()
			w.k.agentsHook = func() { <-applied; cancel() } // still running when everything else is done
		}, "waiting for the node agents to run", true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			c.at(w, cancel)
			var tracked bool
			res, err := w.m.Create(ctx, testSpec(), func(winnode.Identity) { tracked = true })
			var se *guest.StageError
			if !errors.Is(err, context.Canceled) || !errors.As(err, &se) || se.Stage != c.stage {
				t.Fatalf("err = %v, want stage %q cancelled", err, c.stage)
			}
			if !tracked || res.VMID == "" {
				t.Error("the VM is not tracked")
			}
			if created := slices.Contains(w.k.names(), "CreateBootstrapToken"); created != c.token {
				t.Errorf("token created: %v, want %v", created, c.token)
			}
			if live := w.k.liveTokens(); len(live) != 0 {
				t.Errorf("bootstrap tokens %v outlived the cancelled create", live)
			}
			if c.token && (len(w.k.tokenDeleteBound) == 0 || slices.Contains(w.k.tokenDeleteBound, false)) {
				t.Errorf("token deletions %v: want each with a live context bounded by 15 s", w.k.tokenDeleteBound)
			}
			if exists := w.k.node("win-1") != nil; exists != c.node {
				t.Errorf("Node exists: %v, want %v", exists, c.node)
			}
			if w.g.Open() != 0 {
				t.Error("the transport was left open")
			}
		})
	}
}

// TestJoin re-joins a node whose VM exists: after its Node was deleted, in
// place (networking changed: our Node stays), and after a Node of the same
// name was left by a VM destroyed outside Terraform.
func TestJoin(t *testing.T) {
	cases := []struct {
		name        string
		setup       func(w *world, id winnode.Identity)
		deletesNode bool
	}{
		{"Node deleted from the cluster", func(*world, winnode.Identity) {}, false},
		{"in place", func(w *world, id winnode.Identity) {
			w.k.register("win-1")
			w.k.nodes["win-1"].Spec.ProviderID = id.ProviderID()
		}, false},
		{"stale Node of a destroyed VM", func(w *world, _ winnode.Identity) {
			w.k.nodes["win-1"] = staleNode("vm-9")
		}, true},
		{"Node without a providerID", func(w *world, _ winnode.Identity) {
			w.k.nodes["win-1"] = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-1", Labels: map[string]string{kube.LabelOS: "windows"}}}
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			spec := testSpec()
			vm := w.vs.add("/dc/vm/nodes/win-1", &vsphere.VMInfo{VM: vsphere.VM{Name: "win-1", BIOSUUID: "4211AAAA-0000-0000-0000-000000000042"}})
			id := winnode.Identity{VMID: vm.ID(), BIOSUUID: vm.BIOSUUID}
			c.setup(w, id)
			res, err := w.m.Join(t.Context(), spec, id)
			if err != nil {
				t.Fatal(err)
			}
			if deleted := w.k.called("DeleteNode"); deleted != c.deletesNode {
				t.Errorf("DeleteNode called: %v, want %v (%v)", deleted, c.deletesNode, w.k.Calls())
			}
			if c.deletesNode && !w.k.before("DeleteNode", "CreateBootstrapToken") {
				t.Error("the stale Node must go before the kubelet registers")
			}
			if n := w.k.node("win-1"); n == nil || n.Spec.ProviderID != id.ProviderID() || res.Node == nil {
				t.Errorf("Node %+v: want it joined with providerID %s", n, id.ProviderID())
			}
			if w.vs.called("CloneNode") || w.vs.called("PowerOn") {
				t.Error("a re-join must not clone or power on")
			}
			if len(w.k.liveTokens()) != 0 || strings.Join(w.g.Ran(), ",") != allSteps {
				t.Errorf("tokens %v, steps %v", w.k.liveTokens(), w.g.Ran())
			}
		})
	}
}

// TestJoinOptions: the run's discovered network replaces discovery, a node
// without networking waits for no agents, and an SSH transport reports the
// host key it trusted.
func TestJoinOptions(t *testing.T) {
	w := newWorld(t)
	discovered := 0
	w.m.Network = func(context.Context) (*kube.ClusterNetwork, error) {
		discovered++
		n := w.k.network
		return &n, nil
	}
	spec := testSpec()
	spec.Networking = ""
	const key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHostKeyOfTheGuest"
	spec.Transport = remote.Config{Protocol: remote.ProtocolSSH, HostKey: key}
	res, err := w.m.Create(t.Context(), spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if discovered != 1 || w.k.called("DiscoverNetwork") {
		t.Errorf("Manager.Network used %d times, kube discovery called: %v", discovered, w.k.called("DiscoverNetwork"))
	}
	if res.CNI != "none" || w.k.called("WaitForAgentsReady") || w.k.called("ObservedNetworkingMode") {
		t.Errorf("CNI %q, cluster calls %v: a node without networking runs none and waits for no agents", res.CNI, w.k.Calls())
	}
	if res.SSHHostKey != key {
		t.Errorf("SSHHostKey %q, want the key the transport trusted", res.SSHHostKey)
	}
	cfg := w.g.Configs()[0]
	if cfg.Host != "192.0.2.21" || cfg.User != "Administrator" || cfg.Password != adminpass.ForNode("N0de-Passw0rd!", "win-1", "Administrator") {
		t.Errorf("connected with host %q user %q: want the guest's IP and the admin account", cfg.Host, cfg.User)
	}
}

// staleNode is a Node this provider joined on VM vmID of the fake vCenter.
func staleNode(vmID string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "win-1", UID: "uid-stale",
			Labels:      map[string]string{kube.LabelManagedBy: kube.FieldManager},
			Annotations: map[string]string{kube.VMAnnotation: kube.NodeVM(vcenterID, vmID)}},
		Spec: corev1.NodeSpec{ProviderID: "vsphere://4211cccc-0000-0000-0000-000000000009"},
	}
}

// TestJoinLeavesNodesNotOurs: a Node of the node's name that is not
// provably this provider's, on a VM that is provably gone, is never
// deleted (a VM merely not seen proves nothing): the join stops before the
// bootstrap token and the error names the Node and why.
func TestJoinLeavesNodesNotOurs(t *testing.T) {
	cases := []struct {
		name string
		node func(w *world) *corev1.Node
		want string
	}{
		{"no label: not joined by this provider", func(*world) *corev1.Node {
			n := staleNode("vm-9")
			delete(n.Labels, kube.LabelManagedBy)
			return n
		}, `Node "win-1" belongs to another VM .*not joined by this provider \(no app.kubernetes.io/managed-by=terraform-provider-windows label\); nothing was deleted`},
		{"another vCenter's VM", func(*world) *corev1.Node {
			n := staleNode("vm-9")
			n.Annotations[kube.VMAnnotation] = kube.NodeVM("other-vcenter", "vm-9")
			return n
		}, `Node "win-1" belongs to another VM \(its windows.wincluster.io/vm annotation is "other-vcenter/vm-9".*a VM this vCenter cannot vouch for; nothing was deleted`},
		{"its VM still exists", func(w *world) *corev1.Node {
			other := w.vs.add("/dc/vm/elsewhere/win-1", &vsphere.VMInfo{VM: vsphere.VM{Name: "win-1", BIOSUUID: "4211cccc-0000-0000-0000-000000000009"}})
			return staleNode(other.ID())
		}, `Node "win-1" belongs to another VM .*and VM vm-\d+ still exists; nothing was deleted`},
		{"registered by another machine, never claimed", func(*world) *corev1.Node {
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-1", UID: "uid-other"}}
			n.Status.NodeInfo.SystemUUID = "4211DDDD-0000-0000-0000-000000000001"
			return n
		}, `Node "win-1" was registered by another machine \(system UUID "4211DDDD-0000-0000-0000-000000000001", no providerID`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			vm := w.vs.add("/dc/vm/nodes/win-1", &vsphere.VMInfo{VM: vsphere.VM{Name: "win-1", BIOSUUID: "4211AAAA-0000-0000-0000-000000000042"}})
			w.k.nodes["win-1"] = c.node(w)
			before := w.k.node("win-1")
			_, err := w.m.Join(t.Context(), testSpec(), winnode.Identity{VMID: vm.ID(), BIOSUUID: vm.BIOSUUID})
			checkErr(t, err, "^checking the Node name: "+c.want)
			var notOurs *winnode.NodeNotOursError
			if !errors.As(err, &notOurs) || notOurs.Name != "win-1" {
				t.Errorf("error %v: want a *NodeNotOursError naming win-1", err)
			}
			if w.k.called("DeleteNode") || w.k.called("CreateBootstrapToken") {
				t.Errorf("calls %v: nothing may be deleted, and the join must stop before its token", w.k.Calls())
			}
			if after := w.k.node("win-1"); after == nil || after.UID != before.UID {
				t.Errorf("the Node changed: %+v", after)
			}
		})
	}
}

// TestJoinStaleNodeReplaced: the stale Node is deleted with its UID as a
// precondition, so a Node registered anew between the read and the delete
// (another machine's) survives.
func TestJoinStaleNodeReplaced(t *testing.T) {
	w := newWorld(t)
	vm := w.vs.add("/dc/vm/nodes/win-1", &vsphere.VMInfo{VM: vsphere.VM{Name: "win-1", BIOSUUID: "4211AAAA-0000-0000-0000-000000000042"}})
	w.k.nodes["win-1"] = staleNode("vm-9")
	w.vs.at["VMGone"] = func() { // the stale Node goes and another registers
		w.k.mu.Lock()
		w.k.nodes["win-1"] = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-1", UID: "uid-new"}}
		w.k.mu.Unlock()
	}
	_, err := w.m.Join(t.Context(), testSpec(), winnode.Identity{VMID: vm.ID(), BIOSUUID: vm.BIOSUUID})
	checkErr(t, err, `^checking the Node name: Node "win-1": precondition failed`)
	if n := w.k.node("win-1"); n == nil || n.UID != "uid-new" {
		t.Errorf("the new Node was deleted: %+v", n)
	}
}

// TestCreateAdoptsEarlierClone: a create that died between the clone and
// the state write left a VM carrying the node's marks; the next create
// adopts it (reports it through onVM, powers it on, joins it) and clones
// nothing. A VM at that place without the marks, or of another template,
// is never adopted: the create stops, names it, and clones nothing.
func TestCreateAdoptsEarlierClone(t *testing.T) {
	cases := []struct {
		name  string
		marks map[string]string
		want  string
	}{
		{"left by a killed create", map[string]string{winnode.CloneNodeKey: "win-1", winnode.CloneTemplateKey: templatePath}, ""},
		{"not this provider's", nil,
			`^checking the node's VM name: a VM named "win-1" already exists in folder "/dc/vm/nodes" \(vm-\d+\) and was not cloned by terraform-provider-windows \(it has no wincluster.node record\), so it is not adopted`},
		{"another template", map[string]string{winnode.CloneNodeKey: "win-1", winnode.CloneTemplateKey: "/dc/vm/templates/old"},
			`^checking the node's VM name: .*was cloned from template "/dc/vm/templates/old", and this node clones "/dc/vm/templates/win2022"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			left := w.vs.add("/dc/vm/nodes/win-1", &vsphere.VMInfo{
				VM:         vsphere.VM{Name: "win-1", BIOSUUID: "4211AAAA-0000-0000-0000-000000000077"},
				PowerState: vimtypes.VirtualMachinePowerStatePoweredOff, ExtraConfig: c.marks,
			})
			var reported []winnode.Identity
			res, err := w.m.Create(t.Context(), testSpec(), func(id winnode.Identity) { reported = append(reported, id) })
			if w.vs.called("CloneNode") {
				t.Errorf("calls %v: nothing may be cloned with a VM at the clone's place", w.vs.Calls())
			}
			if c.want != "" {
				checkErr(t, err, c.want)
				var notOurs *winnode.NotOurVMError
				if !errors.As(err, &notOurs) || len(reported) != 0 || w.vs.called("PowerOn") {
					t.Errorf("err %v, reported %v: want a *NotOurVMError, the VM neither reported nor touched", err, reported)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(reported) != 1 || reported[0].VMID != left.ID() || res.VMID != left.ID() || reported[0].InventoryPath != "/dc/vm/nodes/win-1" {
				t.Errorf("reported %+v, result %s: want the left VM %s adopted", reported, res.VMID, left.ID())
			}
			if n := w.k.node("win-1"); n == nil || n.Spec.ProviderID != res.ProviderID() {
				t.Errorf("Node %+v: want it joined on the adopted VM", n)
			}
		})
	}
}

// TestCreateNetworkProbe: a node with agents is probed at the end of its
// create, with the join's cluster domain and the spec's RuntimeClass, and the
// result carries the paths; skip_checks' "network-probe" leaves it out.
// TestCreateRebootAfterJoin: with reboot_after_join the node, once done,
// is restarted (the reboot step, then the wait for the guest's restart) and
// must be Ready again from the new boot, its agents running again since the
// restart, and its probe passing again, before the create returns.
func TestCreateRebootAfterJoin(t *testing.T) {
	w := newWorld(t)
	spec := testSpec()
	spec.RebootAfterJoin = true
	w.g.Steps["reboot"] = guesttest.Reply{Stdout: bootstrap.RebootMarker + "\n"}
	res, err := w.m.Create(t.Context(), spec, func(winnode.Identity) {})
	if err != nil {
		t.Fatal(err)
	}
	if ran := strings.Join(w.g.Ran(), ","); !strings.HasSuffix(ran, "join-cleanup,reboot") {
		t.Errorf("steps %s", ran)
	}
	if len(w.k.probes) != 2 {
		t.Errorf("probed %d times, want before and after the reboot", len(w.k.probes))
	}
	if !slices.Contains(w.vs.Calls(), "WaitForGuestRestart "+res.VMID) || res.RebootRecovery <= 0 {
		t.Errorf("vSphere calls %v, recovery %s", w.vs.Calls(), res.RebootRecovery)
	}
	// A guest that does not start its restart fails the create, naming it.
	w = newWorld(t)
	w.g.Steps["reboot"] = guesttest.Reply{Stdout: "nothing\n"}
	if _, err := w.m.Create(t.Context(), spec, func(winnode.Identity) {}); err == nil || !strings.Contains(err.Error(), "the guest did not start its restart") {
		t.Errorf("err %v", err)
	}
}

func TestCreateNetworkProbe(t *testing.T) {
	w := newWorld(t)
	spec := testSpec()
	spec.ProbeRuntimeClass = "windows-2022"
	res, err := w.m.Create(t.Context(), spec, func(winnode.Identity) {})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.k.probes) != 1 || w.k.probes[0].Node != "win-1" || w.k.probes[0].ClusterDomain != "cluster.local" || w.k.probes[0].RuntimeClass != "windows-2022" ||
		w.k.probes[0].NodeIP == "" || w.k.probes[0].AgentNamespace != spec.Networking || len(w.k.probes[0].Agents) == 0 {
		t.Errorf("probes %+v", w.k.probes)
	}
	if len(res.ProbePaths) != 1 || !res.ProbePaths[0].Passed {
		t.Errorf("result's probe paths %+v", res.ProbePaths)
	}

	w = newWorld(t)
	spec.SkipNetworkProbe = true
	if _, err := w.m.Create(t.Context(), spec, func(winnode.Identity) {}); err != nil {
		t.Fatal(err)
	}
	if len(w.k.probes) != 0 {
		t.Errorf("skipped, yet probed: %+v", w.k.probes)
	}
}

// TestCreateNetworkProbeNone: a node of mode none (no networking) is probed
// once the cluster's CNI runs HostProcess agents on it, with the mode's
// wording, and not before.
func TestCreateNetworkProbeNone(t *testing.T) {
	spec := testSpec()
	spec.Networking = ""
	w := newWorld(t)
	if _, err := w.m.Create(t.Context(), spec, func(winnode.Identity) {}); err != nil {
		t.Fatal(err)
	}
	if len(w.k.probes) != 0 {
		t.Errorf("no agents on the node, yet probed: %+v", w.k.probes)
	}

	w = newWorld(t)
	w.k.hostProcessAgents = []string{"calico-system/calico-node-windows-x7k2p"}
	if _, err := w.m.Create(t.Context(), spec, func(winnode.Identity) {}); err != nil {
		t.Fatal(err)
	}
	if len(w.k.probes) != 1 || w.k.probes[0].PodNetwork != "the cluster's own CNI" || len(w.k.probes[0].Agents) != 0 {
		t.Errorf("probes %+v, want one, naming the cluster's own CNI", w.k.probes)
	}
}

// TestProbeAtRefresh: probe_on_refresh probes a Ready node and turns a
// failed path into a health cause naming the path, the output and what was
// expected; a passing probe, or a NotReady Node, is no cause.
func TestProbeAtRefresh(t *testing.T) {
	w := newWorld(t)
	spec := testSpec()
	ready := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: spec.Name},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	if failure, err := w.m.ProbeAtRefresh(t.Context(), spec, ready); err != nil || failure != "" {
		t.Errorf("passing probe: %q, %v", failure, err)
	}
	if len(w.k.probes) != 1 || w.k.probes[0].PodNetwork != "flannel's overlay" || len(w.k.probes[0].Agents) == 0 {
		t.Errorf("probes %+v", w.k.probes)
	}
	w.k.probeErr = &kube.ProbeError{Node: spec.Name, Path: kube.ProbePath{What: "a pod on another node (10.244.0.5:8080)", Output: "timed out"},
		Expected: "a TCP connection ... (flannel's overlay)"}
	failure, err := w.m.ProbeAtRefresh(t.Context(), spec, ready)
	if err != nil || !strings.Contains(failure, "a pod on another node (10.244.0.5:8080) failed: timed out") || !strings.Contains(failure, "flannel's overlay") {
		t.Errorf("failing probe: %q, %v", failure, err)
	}
	notReady := ready.DeepCopy()
	notReady.Status.Conditions[0].Status = corev1.ConditionFalse
	if failure, err := w.m.ProbeAtRefresh(t.Context(), spec, notReady); err != nil || failure != "" || len(w.k.probes) != 2 {
		t.Errorf("a NotReady Node was probed: %q, %v, %d probes", failure, err, len(w.k.probes))
	}
}

// TestCreateUploadsTheBootstrapKubeconfig: the file that holds the
// bootstrap token reaches the guest through the transport's upload, and no
// script the guest runs carries the token in any form (PowerShell's script
// block logging may write a script's text to the Operational event log).
func TestCreateUploadsTheBootstrapKubeconfig(t *testing.T) {
	w := newWorld(t)
	if _, err := w.m.Create(t.Context(), testSpec(), func(winnode.Identity) {}); err != nil {
		t.Fatal(err)
	}
	if got := w.g.Files[bootstrap.BootstrapKubeconfig]; !strings.Contains(got, "token: tok001."+tokenSecret) {
		t.Fatalf("the uploaded bootstrap kubeconfig is %q, want one with the token", got)
	}
	for _, s := range w.g.Scripts() {
		for _, form := range []string{tokenSecret, base64.StdEncoding.EncodeToString([]byte(tokenSecret))[:12], "bootstrap-kubeconfig', [Convert]"} {
			if strings.Contains(s, form) {
				t.Fatalf("a script carries the token (%q):\n%s", form, s)
			}
		}
	}
}

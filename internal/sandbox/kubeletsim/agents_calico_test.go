package kubeletsim_test

import (
	"context"
	"log"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/kubeletsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/kubeletsim/kubeletsimtest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/linuxnode"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/sandboxtest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// calicoNodeRules are what calico-node reads and writes in the Kubernetes
// datastore, from the calico-node ClusterRole (tigera/operator
// pkg/render/node.go nodeRole), narrowed to what the simulated startup and
// Felix use.
var calicoNodeRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch", "patch"}},
	{APIGroups: []string{""}, Resources: []string{"nodes/status"}, Verbs: []string{"patch", "update"}},
	{APIGroups: []string{"crd.projectcalico.org"}, Resources: []string{"ipamconfigs"}, Verbs: []string{"get", "create"}},
	{APIGroups: []string{"crd.projectcalico.org"}, Resources: []string{"blockaffinities", "ipamblocks"}, Verbs: []string{"get", "list", "watch", "create", "update"}},
	{APIGroups: []string{"crd.projectcalico.org"}, Resources: []string{"ippools", "felixconfigurations"}, Verbs: []string{"get", "list"}},
}

// TestCalicoNodeWindows runs calico-node.exe's startup and Felix on a
// Windows host against a cluster running Calico: without strict affinity
// the startup refuses as libcalico-go's IPAM does; with it, the host claims
// its own block in the real datastore, creates the Calico Overlay network
// over it and records its VXLAN tunnel; Felix routes the Linux node's block
// to that node's VTEP. A VNI below 4096 is refused.
func TestCalicoNodeWindows(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s := sandboxtest.Start(ctx, t, sandbox.Options{CNI: linuxnode.CNICalico, Logf: log.Printf})
	cs := s.ControlPlane.Client
	dyn, err := dynamic.NewForConfig(s.ControlPlane.Config)
	if err != nil {
		t.Fatal(err)
	}
	const name = "win-calico"
	n := kubeletsimtest.NewNode(t, name, kubeletsimtest.Options{Checker: s.KubeletChecker()})
	// The Node as the kubelet registers it (calico-node reads its address).
	if _, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/os": "windows"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Controllers write the new Node too: retried on a fresh read.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		nd, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		nd.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: n.Host.IP()}}
		_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, nd, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	const exe = `C:\CalicoWindows\calico-node.exe`
	if err := n.Host.WriteFile(exe, []byte(kubeletsimtest.Executable("calico-node", "v3.32.1"))); err != nil {
		t.Fatal(err)
	}
	kc := serviceAccountKubeconfig(t, s, n.Host, "calico-node", calicoNodeRules, "")
	env := func(vni string) map[string]string {
		return map[string]string{"NODENAME": name, "DATASTORE_TYPE": "kubernetes", "KUBECONFIG": kc,
			"CALICO_NETWORKING_BACKEND": "vxlan", "VXLAN_VNI": vni, "KUBE_NETWORK": "Calico.*"}
	}
	setStrict := func(strict string) {
		_, err := dyn.Resource(linuxnode.CalicoGVR("ipamconfigs")).Patch(ctx, "default", types.MergePatchType,
			[]byte(`{"spec": {"strictAffinity": `+strict+`}}`), metav1.PatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}

	t.Run("strict affinity off", func(t *testing.T) {
		setStrict("false")
		defer setStrict("true")
		code, out := runAgent(t, n.Host, exe, []string{"-startup"}, env("4096"), 30*time.Second)
		if code != 1 || !strings.Contains(out, "global strict affinity should not be false for Windows node") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		if nets := winsim.HNSNetworks(n.Host); len(nets) != 0 {
			t.Errorf("HNS networks %v after a refused startup", nets)
		}
	})
	t.Run("VNI below 4096", func(t *testing.T) {
		code, out := runAgent(t, n.Host, exe, []string{"-startup"}, env("1"), 30*time.Second)
		if code != 1 || !strings.Contains(out, "Windows does not support VXLANVNI < 4096") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
	})
	t.Run("etcd datastore", func(t *testing.T) {
		e := env("4096")
		delete(e, "DATASTORE_TYPE")
		code, out := runAgent(t, n.Host, exe, []string{"-startup"}, e, 30*time.Second)
		if code != 1 || !strings.Contains(out, `is not modelled by the simulator (DATASTORE_TYPE=kubernetes only)`) {
			t.Fatalf("exit %d:\n%s", code, out)
		}
	})
	t.Run("startup", func(t *testing.T) {
		code, out := runAgent(t, n.Host, exe, []string{"-startup", "-complete-startup"}, env("4096"), 30*time.Second)
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		// The Linux node holds 10.244.0.0/26: this host claims the next.
		const block = "10.244.0.64/26"
		aff, err := dyn.Resource(linuxnode.CalicoGVR("blockaffinities")).Get(ctx, linuxnode.CalicoAffinityName(name, block), metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the host's BlockAffinity: %v\n%s", err, out)
		}
		if spec := aff.Object["spec"].(map[string]any); spec["state"] != "confirmed" || spec["node"] != name {
			t.Errorf("BlockAffinity spec %v", spec)
		}
		net := hnsNetwork(t, n.Host, kubeletsim.CalicoNetworkName)
		if net.Type != "Overlay" || net.AddressPrefix != block || net.VNI != 4096 {
			t.Errorf("HNS network %+v, want Overlay over %s with VNI 4096", net, block)
		}
		nd, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := nd.Annotations["projectcalico.org/IPv4VXLANTunnelAddr"]; got != "10.244.0.65" {
			t.Errorf("VXLAN tunnel address %q, want the block's .1", got)
		}
		var up bool
		for _, c := range nd.Status.Conditions {
			up = up || (c.Type == corev1.NodeNetworkUnavailable && c.Status == corev1.ConditionFalse && c.Reason == "CalicoIsUp")
		}
		if !up {
			t.Errorf("NetworkUnavailable not cleared by CalicoIsUp: %+v", nd.Status.Conditions)
		}
		// Again: the same block and network are kept.
		if code, out := runAgent(t, n.Host, exe, []string{"-startup"}, env("4096"), 30*time.Second); code != 0 || hnsNetwork(t, n.Host, kubeletsim.CalicoNetworkName).AddressPrefix != block {
			t.Errorf("second startup: exit %d\n%s", code, out)
		}
	})
	t.Run("felix routes the Linux node's block", func(t *testing.T) {
		fctx, stop := context.WithCancel(ctx)
		defer stop()
		var stderr syncBuffer
		done := make(chan int, 1)
		go func() {
			done <- n.Host.Run(fctx, &winsim.Process{Path: exe, Args: []string{"-felix"}, Env: env("4096"), Stderr: &stderr})
		}()
		waitFor(t, "Felix programming its routes", func() bool { return strings.Contains(stderr.String(), "All VXLAN route updates succeeded.") }, done, &stderr)
		net := hnsNetwork(t, n.Host, kubeletsim.CalicoNetworkName)
		if len(net.Policies) != 1 || net.Policies[0].DestinationPrefix != linuxnode.CalicoBlock ||
			net.Policies[0].ProviderAddress != "127.0.0.1" || net.Policies[0].IsolationID != 4096 {
			t.Errorf("network policies %+v, want one RemoteSubnetRoute to %s via 127.0.0.1", net.Policies, linuxnode.CalicoBlock)
		}
	})
	t.Run("unmodelled mode", func(t *testing.T) {
		code, out := runAgent(t, n.Host, exe, []string{"-confd"}, env("4096"), 30*time.Second)
		if code != 1 || !strings.Contains(out, "-confd is not modelled by the simulator") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
	})
}

func hnsNetwork(t *testing.T, h *winsim.Host, name string) winsim.HNSNetwork {
	t.Helper()
	for _, n := range winsim.HNSNetworks(h) {
		if n.Name == name {
			return n
		}
	}
	t.Fatalf("no HNS network %s among %v", name, winsim.HNSNetworks(h))
	return winsim.HNSNetwork{}
}

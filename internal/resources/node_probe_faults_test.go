package resources_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/controlplane"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/kubeletsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/vmtools"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// TestAccNode_networkProbeFaults: a node whose networking breaks after its
// agents turned Ready fails its create at the network probe, naming the path
// that failed, what was expected, and the host's evidence read over its
// transport (HNS's load balancers, hnsdiag, the agents' last log lines):
//   - kube-proxy stopped, its load balancers gone from HNS: the cluster DNS
//     does not resolve (no load balancer for kube-dns's ClusterIP);
//   - a stale load balancer, kube-dns's over TCP pointing at an endpoint HNS
//     no longer has: names resolve, the connection to the ClusterIP is
//     dropped.
//
// Each fault is injected the moment the join's last step (join-cleanup)
// finishes, after the agents were Ready and before the probe. The probe's
// NodePort Service is gone after each failure, and a node created without a
// fault passes every path, its own NodePort included.
func TestAccNode_networkProbeFaults(t *testing.T) {
	sb := acctest.RequireSandbox(t, "injects faults into a host's HNS and kube-proxy")
	k := acctest.Kube(t)
	ns := createNamespace(t, k, "pf")
	image := acctest.Name("img-pf")
	cli := acctest.NewCLI(t)
	onJoinCleanup := func(node string, fault func(h *winsim.Host) error) (remove func()) {
		return sb.Hosts.OnEvent(func(ev vmtools.Event) {
			if ev.Script == nil || ev.Script.Step != "join-cleanup" || !strings.EqualFold(ev.ComputerName, node) {
				return
			}
			if err := fault(sb.Hosts.ByName(ev.ComputerName)); err != nil {
				t.Errorf("injecting the fault on %s: %v", node, err)
			}
		})
	}
	noProbeServiceLeft := func() {
		t.Helper()
		svcs, err := k.CoreV1().Services(kube.ProbeNamespace).List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=network-probe"})
		if err != nil || len(svcs.Items) != 0 {
			t.Errorf("probe Services left: %v %v", svcs, err)
		}
	}

	t.Run("kube-proxy stopped", func(t *testing.T) {
		node := fmt.Sprintf("pf-%d", acctest.Seq())
		remove := onJoinCleanup(node, kubeletsim.StopKubeProxy)
		defer remove()
		defer sb.Hosts.ClearFaults(strings.ToUpper(node))
		start := time.Now()
		out, err := cli.Apply(flannelNodeConfig(ns, image, []string{node}, ""))
		if err == nil {
			t.Fatalf("the create passed with kube-proxy stopped:\n%s", out)
		}
		t.Logf("failed in %s", time.Since(start).Round(time.Second))
		expectOutput(t, out+err.Error(),
			`network probe of node `+node+`: cluster DNS and ClusterIP Service \(kube-dns.kube-system.svc.cluster.local:53 over TCP\) failed: DNS: `,
			`expected: the name resolves through the cluster DNS`,
			`host evidence \(HNS and the node agents' last log lines\):`,
			`--- Get-HnsPolicyList`, `--- hnsdiag list all`,
			`--- last lines of C:\\var\\log\\pods\\`+ns+`_kube-proxy-windows-`,
			`kube-proxy is stopped on this host`)
		noProbeServiceLeft()
	})

	t.Run("stale load balancer", func(t *testing.T) {
		node := fmt.Sprintf("pf-%d", acctest.Seq())
		var mu sync.Mutex
		var lbID, gone string
		remove := onJoinCleanup(node, func(h *winsim.Host) error {
			id, g, err := kubeletsim.MakeLoadBalancerStale(h, controlplane.DNSServiceIP, 53, "TCP")
			mu.Lock()
			lbID, gone = id, g
			mu.Unlock()
			return err
		})
		defer remove()
		out, err := cli.Apply(flannelNodeConfig(ns, image, []string{node}, ""))
		if err == nil {
			t.Fatalf("the create passed with a stale load balancer:\n%s", out)
		}
		mu.Lock()
		id, g := lbID, gone
		mu.Unlock()
		expectOutput(t, out+err.Error(),
			`network probe of node `+node+`: cluster DNS and ClusterIP Service \(kube-dns.kube-system.svc.cluster.local:53 over TCP\) failed: TIMEOUT`,
			`HNS load balancer `+regexp.QuoteMeta(id)+` sends to endpoint `+regexp.QuoteMeta(g)+`, which HNS does not have`,
			`expected: the name resolved; then a TCP connection to kube-dns's ClusterIP reaches a DNS pod`,
			`LoadBalancers:`, regexp.QuoteMeta(id)+` \|  `+regexp.QuoteMeta(controlplane.DNSServiceIP))
		noProbeServiceLeft()
	})

	t.Run("no fault", func(t *testing.T) {
		node := fmt.Sprintf("pf-%d", acctest.Seq())
		if _, err := cli.Apply(flannelNodeConfig(ns, image, []string{node}, "")); err != nil {
			t.Fatalf("a node without a fault: %v", err)
		}
		// The probe's paths, the node's own NodePort among them, all passed.
		n, err := k.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		paths, err := k.ProbeNetwork(context.Background(), kube.ProbeRequest{Node: node, ClusterDomain: "cluster.local",
			NodeIP: nodeInternalIP(n), NodeLabels: n.Labels, NodeTaints: n.Spec.Taints})
		if err != nil || len(paths) != 3 || paths[2].Name != "node-port" || !paths[2].Passed {
			t.Errorf("probe of %s: %+v %v", node, paths, err)
		}
		noProbeServiceLeft()
	})
}

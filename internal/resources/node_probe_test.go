package resources_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tfjson "github.com/hashicorp/terraform-json"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
)

// TestAccNode_networkProbeDNS: nodes with flannel networking pass the
// network probe at create (a pod on each resolves kube-dns through the real
// CoreDNS and reaches it through the ClusterIP load balancer kube-proxy
// programmed, then a pod on the Linux node), and their refresh records them
// healthy. With kube-dns's selector patched to select nothing (the
// EndpointSlice controller empties its endpoints), the next refresh records
// every node unhealthy naming the cluster DNS, and the plan warns once per
// node, naming it and the cluster DNS, without planning a change (the
// provider cannot repair the cluster DNS); a new node's create fails naming
// the DNS path, what was expected and the evidence. Restored, the new node
// is created again and passes, and the plan neither warns nor changes.
func TestAccNode_networkProbeDNS(t *testing.T) {
	acctest.PreCheck(t)
	k := acctest.Kube(t)
	ns := createNamespace(t, k, "pr")
	image := acctest.Name("img-pr")
	n0, n1, n2, n3 := fmt.Sprintf("pr-%d", acctest.Seq()), fmt.Sprintf("pr-%d", acctest.Seq()), fmt.Sprintf("pr-%d", acctest.Seq()), fmt.Sprintf("pr-%d", acctest.Seq())
	two, three := flannelNodeConfig(ns, image, []string{n0, n1}, ""), flannelNodeConfig(ns, image, []string{n0, n1, n2}, "")
	// Restored, a new node under a name of its own: one that replaced the
	// failed node under its name could find that node's agent pods still
	// showing their last Ready status (they outlive their Node until the pod
	// garbage collector's quarantine ends), which the create's agent wait
	// takes for its own: not what this test is about.
	again := flannelNodeConfig(ns, image, []string{n0, n1, n3}, "")
	cli := acctest.NewCLI(t)

	start := time.Now()
	if _, err := cli.Apply(two); err != nil {
		t.Fatal(err)
	}
	t.Logf("image and two nodes with their probes: %s", time.Since(start).Round(time.Millisecond))
	for _, n := range []string{n0, n1} {
		if err := checkAgentsRunning(t, ns, n); err != nil {
			t.Fatal(err)
		}
	}
	out, plan := planOK(t, cli, two)
	if strings.Contains(out, "cluster DNS has no endpoints") || strings.Contains(out, "node agents not Running and Ready") {
		t.Errorf("the plan warns of healthy nodes:\n%s", out)
	}
	for _, addr := range []string{"windows_node.n0", "windows_node.n1"} {
		if h := refreshedHealth(t, plan, addr); h["status"] != "healthy" || h["cluster_dns_ready_endpoints"] != float64(1) {
			t.Errorf("%s's health after its create: %v", addr, h)
		}
	}

	setKubeDNSSelector(t, k, "nothing")
	out, plan = planOK(t, cli, two)
	for _, n := range []string{n0, n1} {
		expectOutput(t, out, `Warning: Windows node `+n+`: cluster DNS has no endpoints`,
			`Service kube-system/kube-dns has no ready endpoints, so no pod on node `+n+` resolves names`)
	}
	for _, addr := range []string{"windows_node.n0", "windows_node.n1"} {
		h := refreshedHealth(t, plan, addr)
		causes, _ := h["causes"].([]any)
		if h["status"] != "unhealthy" || h["cluster_dns_ready_endpoints"] != float64(0) || len(causes) != 1 ||
			causes[0] != "cluster DNS: Service kube-system/kube-dns has no ready endpoints" {
			t.Errorf("%s's health with the cluster DNS gone: %v", addr, h)
		}
		if c := change(t, plan, addr); !c.Actions.NoOp() {
			t.Errorf("the plan changes %s, which the provider cannot repair: %v", addr, c.Actions)
		}
	}

	// The probe waits for a ready DNS endpoint first (kube.DNSReadyWait, 2
	// minutes); none comes here, so a short wait shows the same failure.
	defer func(d time.Duration) { kube.DNSReadyWait = d }(kube.DNSReadyWait)
	kube.DNSReadyWait = 5 * time.Second
	out, err := cli.Apply(three)
	if err == nil {
		t.Fatalf("a node was created while the cluster DNS has no endpoints:\n%s", out)
	}
	expectOutput(t, out+err.Error(), `network probe of node `+n2+`: cluster DNS and ClusterIP Service \(kube-dns.kube-system.svc.cluster.local:53 over TCP\) failed: DNS: `,
		`expected: the name resolves through the cluster DNS`,
		`evidence: Service kube-system/kube-dns has no ready endpoints`)

	setKubeDNSSelector(t, k, "kube-dns")
	if _, err := cli.Apply(again); err != nil {
		t.Fatalf("restored cluster DNS: %v", err)
	}
	out, plan = planOK(t, cli, again)
	if strings.Contains(out, "Warning:") {
		t.Errorf("the plan still warns:\n%s", out)
	}
	for _, rc := range plan.ResourceChanges {
		if !rc.Change.Actions.NoOp() {
			t.Errorf("the plan after the restore changes %s: %v\n%s", rc.Address, rc.Change.Actions, out)
		}
	}
	for _, addr := range []string{"windows_node.n0", "windows_node.n1", "windows_node.n2"} { // n2: the third node, named n3 now
		if h := refreshedHealth(t, plan, addr); h["status"] != "healthy" {
			t.Errorf("%s's health with the cluster DNS restored: %v", addr, h)
		}
	}
}

// refreshedHealth is a node's health attribute as the plan's refresh read it.
func refreshedHealth(t *testing.T, plan *tfjson.Plan, addr string) map[string]any {
	t.Helper()
	h, _ := change(t, plan, addr).Before.(map[string]any)["health"].(map[string]any)
	return h
}

// setKubeDNSSelector points kube-dns's selector at k8s-app=app and waits for
// the EndpointSlice controller to follow (no endpoints, or some), restoring
// it at the end of the test.
func setKubeDNSSelector(t *testing.T, k kubernetes.Interface, app string) {
	t.Helper()
	ctx := context.Background()
	patch := func(app string) error {
		_, err := k.CoreV1().Services("kube-system").Patch(ctx, "kube-dns", types.MergePatchType,
			[]byte(`{"spec":{"selector":{"k8s-app":"`+app+`"}}}`), metav1.PatchOptions{})
		return err
	}
	if err := patch(app); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = patch("kube-dns") })
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	w, err := k.DiscoveryV1().EndpointSlices("kube-system").Watch(wctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=kube-dns"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	want := app == "kube-dns"
	for ev := range w.ResultChan() {
		if ev.Type == watch.Error {
			continue
		}
		s, ok := ev.Object.(*discoveryv1.EndpointSlice)
		if ok && (len(s.Endpoints) > 0) == want {
			return
		}
	}
	t.Fatalf("kube-dns's EndpointSlice never followed its selector k8s-app=%s", app)
}

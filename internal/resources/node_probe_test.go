package resources_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
)

// TestAccNode_networkProbeDNS: a node with flannel networking passes the
// network probe at create (a pod on it resolves kube-dns through the real
// CoreDNS and reaches it through the ClusterIP load balancer kube-proxy
// programmed, then a pod on the Linux node). With kube-dns selecting nothing,
// the next plan warns, naming the node and the cluster DNS, and a new node's
// create fails naming the DNS path, what was expected and the evidence.
// Restored, the replacement passes and the plan no longer warns.
func TestAccNode_networkProbeDNS(t *testing.T) {
	acctest.PreCheck(t)
	k := acctest.Kube(t)
	ns := createNamespace(t, k, "pr")
	image := acctest.Name("img-pr")
	n0, n1 := fmt.Sprintf("pr-%d", acctest.Seq()), fmt.Sprintf("pr-%d", acctest.Seq())
	cli := acctest.NewCLI(t)

	start := time.Now()
	if _, err := cli.Apply(flannelNodeConfig(ns, image, []string{n0}, "")); err != nil {
		t.Fatal(err)
	}
	t.Logf("image and node with its probe: %s", time.Since(start).Round(time.Millisecond))
	if err := checkAgentsRunning(t, ns, n0); err != nil {
		t.Fatal(err)
	}
	out, _ := planOK(t, cli, flannelNodeConfig(ns, image, []string{n0}, ""))
	if strings.Contains(out, "cluster DNS has no endpoints") || strings.Contains(out, "node agents not Running and Ready") {
		t.Errorf("the plan warns of a healthy node:\n%s", out)
	}

	setKubeDNSSelector(t, k, "nothing")
	out, _ = planOK(t, cli, flannelNodeConfig(ns, image, []string{n0}, ""))
	expectOutput(t, out, `Warning: Windows node `+n0+`: cluster DNS has no endpoints`,
		`Service kube-system/kube-dns has no ready endpoints, so no pod on node `+n0+` resolves names`)

	out, err := cli.Apply(flannelNodeConfig(ns, image, []string{n0, n1}, ""))
	if err == nil {
		t.Fatalf("a node was created while the cluster DNS has no endpoints:\n%s", out)
	}
	expectOutput(t, out+err.Error(), `network probe of node `+n1+`: cluster DNS and ClusterIP Service \(kube-dns.kube-system.svc.cluster.local:53 over TCP\) failed: DNS: `,
		`expected: the name resolves through the cluster DNS`,
		`evidence: Service kube-system/kube-dns has no ready endpoints`)

	setKubeDNSSelector(t, k, "kube-dns")
	if _, err := cli.Apply(flannelNodeConfig(ns, image, []string{n0, n1}, "")); err != nil {
		t.Fatalf("restored cluster DNS: %v", err)
	}
	out, _ = planOK(t, cli, flannelNodeConfig(ns, image, []string{n0, n1}, ""))
	if strings.Contains(out, "cluster DNS has no endpoints") {
		t.Errorf("the plan still warns of the cluster DNS:\n%s", out)
	}
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

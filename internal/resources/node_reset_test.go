package resources_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"net/http"
	"sync/atomic"

	"github.com/vmware/govmomi/object"
	vimtypes "github.com/vmware/govmomi/vim25/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/networking"
)

// TestAccNode_resetVM: a node whose VM is reset (vSphere ResetVM_Task, a
// hard power cycle) comes back by itself: the Node is Ready again with a new
// boot ID, its agents run again, a pod on it passes the network probe, and
// the next plan is empty.
func TestAccNode_resetVM(t *testing.T) {
	acctest.PreCheck(t)
	k := acctest.Kube(t)
	ns := createNamespace(t, k, "rs")
	image := acctest.Name("img-rs")
	node := fmt.Sprintf("rs-%d", acctest.Seq())
	config := flannelNodeConfig(ns, image, []string{node}, "")
	cli := acctest.NewCLI(t)
	if _, err := cli.Apply(config); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	before, err := k.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id, err := acctest.VMAt(t, node)
	if err != nil || id == "" {
		t.Fatalf("VM of %s: %q %v", node, id, err)
	}
	vc := acctest.VSphere(t)
	start := time.Now()
	task, err := object.NewVirtualMachine(vc.Client.Client, vimtypes.ManagedObjectReference{Type: "VirtualMachine", Value: id}).Reset(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := task.Wait(ctx); err != nil {
		t.Fatalf("ResetVM_Task: %v", err)
	}

	// Ready again from a new boot, on a watch.
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	w, err := k.CoreV1().Nodes().Watch(wctx, metav1.ListOptions{FieldSelector: "metadata.name=" + node})
	if err != nil {
		t.Fatal(err)
	}
	back := false
	for ev := range w.ResultChan() {
		if n, ok := ev.Object.(*corev1.Node); ok && ev.Type != watch.Deleted && n.Status.NodeInfo.BootID != before.Status.NodeInfo.BootID && kube.NodeIsReady(n) {
			back = true
			break
		}
	}
	w.Stop()
	if !back {
		t.Fatalf("Node %s never came back Ready from a new boot", node)
	}
	readyIn := time.Since(start)
	flannel, _ := networking.Lookup("flannel")
	// Running again since the reset: the pods as the stopped kubelet left
	// them do not count.
	if _, err := k.WaitForAgentsReadySince(wctx, node, ns, flannel.Agents(), start); err != nil {
		t.Fatalf("agents after the reset: %v", err)
	}
	agentsIn := time.Since(start)
	// The probe through a client that counts its API requests.
	var requests atomic.Int32
	cfg := rest.CopyConfig(k.REST)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) { requests.Add(1); return rt.RoundTrip(r) })
	}
	counted := &kube.Client{Interface: kubernetes.NewForConfigOrDie(cfg), REST: cfg}
	probeStart := time.Now()
	after, err := k.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	paths, err := counted.ProbeNetwork(wctx, kube.ProbeRequest{Node: node, ClusterDomain: "cluster.local",
		NodeIP: nodeInternalIP(after), NodeLabels: after.Labels, NodeTaints: after.Spec.Taints})
	if err != nil {
		t.Fatalf("network probe after the reset: %v", err)
	}
	if len(paths) != 3 {
		t.Errorf("probe paths %+v: want the cluster DNS, a pod on the Linux node and the node's own NodePort", paths)
	}
	// The probe's cost, counted at the client: the kube-dns EndpointSlices,
	// the RuntimeClasses, the NodePort Service and its EndpointSlice, the
	// pod's create, list, watch and delete, the Service's delete.
	if n := requests.Load(); n > maxProbeRequests {
		t.Errorf("the probe made %d API requests, want at most %d", n, maxProbeRequests)
	}
	t.Logf("reset: Node Ready again in %s, agents in %s; probe passed (%d paths) in %s with %d API requests",
		readyIn.Round(time.Millisecond), agentsIn.Round(time.Millisecond), len(paths), time.Since(probeStart).Round(time.Millisecond), requests.Load())

	planOut, plan := planOK(t, cli, config)
	for _, rc := range plan.ResourceChanges {
		if !rc.Change.Actions.NoOp() {
			t.Errorf("the plan after the reset changes %s: %v\n%s", rc.Address, rc.Change.Actions, planOut)
		}
	}
}

// maxProbeRequests bounds one network probe's API requests (kube.ProbeNetwork).
const maxProbeRequests = 9

// nodeInternalIP is a Node's InternalIP ("" without one).
func nodeInternalIP(n *corev1.Node) string {
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

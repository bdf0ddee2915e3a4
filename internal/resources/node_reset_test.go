package resources_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vmware/govmomi/object"
	vimtypes "github.com/vmware/govmomi/vim25/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/networking"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
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
	start := time.Now()
	resetVM(t, k, node, before.Status.NodeInfo.BootID)
	readyIn := time.Since(start)
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
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

// TestAccNode_resetVMHNSLost: with the "HNS lost on reboot" fault (the
// host's HNS network and policies gone after the reset, and flanneld unable
// to create the network again, as on the hosts of sig-windows-tools#89/#94
// and flannel#1423), the reset node comes back Ready with its agents
// broken: the refresh records it unhealthy, naming flannel's failure and
// kube-proxy waiting for the network, and the plan names the node and the
// cause, as an update that restarts flannel. The host recovers as the
// repair evicts flannel's pod (the fault cleared then): the apply brings
// the agents back, and the plan after it is empty.
func TestAccNode_resetVMHNSLost(t *testing.T) {
	acctest.PreCheck(t)
	acctest.RequireSandbox(t, "injects a fault into the simulated host")
	k := acctest.Kube(t)
	ns := createNamespace(t, k, "hl")
	image := acctest.Name("img-hl")
	node := fmt.Sprintf("hl-%d", acctest.Seq())
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
	acctest.Sandbox.Hosts.SetFaults(node, winsim.Faults{HNSLostOnReboot: true})
	t.Cleanup(func() { acctest.Sandbox.Hosts.ClearFaults(node) })
	start := time.Now()
	resetVM(t, k, node, before.Status.NodeInfo.BootID)
	readyIn := time.Since(start)
	failed := waitAgentFailure(t, k, ns, node, "flannel", "Element not found")
	t.Logf("reset with HNS lost: Node Ready again in %s; flannel failed to create the network %s after the reset",
		readyIn.Round(time.Millisecond), failed.Sub(start).Round(time.Millisecond))

	planOut, plan := planOK(t, cli, config)
	expectOutput(t, planOut,
		`Warning: Windows node `+node+`: node agents not Running and Ready \(flannel, kube-proxy\): the apply restarts flannel`,
		`agent flannel: pod `+ns+`/\S+ is CrashLoopBackOff, \d+ restarts, last exit code 1: .*failed to create HostComputeNetwork flannel.4096: hcnCreateNetwork failed in Win32: Element not found`)
	c := change(t, plan, "windows_node.n0")
	if !c.Actions.Update() {
		t.Errorf("the plan does not update the node to restart its agents: %v", c.Actions)
	}
	if unknown, ok := c.AfterUnknown.(map[string]any); !ok || unknown["health"] != true {
		t.Errorf("health is not known after apply in the plan: %v", c.AfterUnknown)
	}
	health, _ := c.Before.(map[string]any)["health"].(map[string]any)
	agents, _ := health["agents"].(map[string]any)
	causes, _ := health["causes"].([]any)
	if health["status"] != "unhealthy" || health["node_ready"] != true || agents["flannel"] != "CrashLoopBackOff" || agents["kube-proxy"] != "not_ready" ||
		len(causes) != 2 {
		t.Errorf("the refreshed health: %v", health)
	}

	// The host recovers the moment the repair restarts flannel (its pod
	// evicted): the fault stays until then, so flannel's own back-off
	// cannot repair it first, and the apply's repair is what brings it back.
	evicted := clearFaultsWhenEvicted(t, k, ns, node, "flannel")
	start = time.Now()
	out, err := cli.Apply(config)
	if err != nil {
		t.Fatalf("the repair: %v", err)
	}
	expectOutput(t, out, `Warning: Windows node `+node+`: node agents not Running and Ready \(flannel, kube-proxy\): the apply restarts flannel`)
	select {
	case <-evicted:
	default:
		t.Errorf("the apply did not evict flannel's pod on %s", node)
	}
	t.Logf("agents repaired in %s", time.Since(start).Round(time.Millisecond))
	planOut, plan = planOK(t, cli, config)
	if c := change(t, plan, "windows_node.n0"); !c.Actions.NoOp() || strings.Contains(planOut, "Warning:") {
		t.Errorf("the plan after the repair: %v\n%s", c.Actions, planOut)
	}
	if h := refreshedHealth(t, plan, "windows_node.n0"); h["status"] != "healthy" {
		t.Errorf("the health after the repair: %v", h)
	}
}

// clearFaultsWhenEvicted clears the host's faults once the agent's pod on
// the node is being deleted (a watch), and closes the channel it returns.
func clearFaultsWhenEvicted(t *testing.T, k *kube.Client, ns, node, agent string) <-chan struct{} {
	t.Helper()
	flannel, _ := networking.Lookup("flannel")
	var selector map[string]string
	for _, a := range flannel.Agents() {
		if a.Name == agent {
			selector = a.Selector
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := k.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node, LabelSelector: labels.SelectorFromSet(selector).String()})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok && (ev.Type == watch.Deleted || p.DeletionTimestamp != nil) {
				acctest.Sandbox.Hosts.ClearFaults(node)
				close(done)
				return
			}
		}
	}()
	return done
}

// resetVM resets the node's VM (vSphere ResetVM_Task, a hard power cycle)
// and waits on a watch for its Node to be Ready from a boot other than
// bootID.
func resetVM(t *testing.T, k *kube.Client, node, bootID string) {
	t.Helper()
	ctx := context.Background()
	id, err := acctest.VMAt(t, node)
	if err != nil || id == "" {
		t.Fatalf("VM of %s: %q %v", node, id, err)
	}
	vc := acctest.VSphere(t)
	task, err := object.NewVirtualMachine(vc.Client.Client, vimtypes.ManagedObjectReference{Type: "VirtualMachine", Value: id}).Reset(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := task.Wait(ctx); err != nil {
		t.Fatalf("ResetVM_Task: %v", err)
	}
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	w, err := k.CoreV1().Nodes().Watch(wctx, metav1.ListOptions{FieldSelector: "metadata.name=" + node})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		if n, ok := ev.Object.(*corev1.Node); ok && ev.Type != watch.Deleted && n.Status.NodeInfo.BootID != bootID && kube.NodeIsReady(n) {
			return
		}
	}
	t.Fatalf("Node %s never came back Ready from a new boot", node)
}

// waitAgentFailure waits on a watch until the agent's pod on the node has
// exited with output containing want, and returns when it saw it.
func waitAgentFailure(t *testing.T, k *kube.Client, ns, node, agent, want string) time.Time {
	t.Helper()
	flannel, _ := networking.Lookup("flannel")
	var selector map[string]string
	for _, a := range flannel.Agents() {
		if a.Name == agent {
			selector = a.Selector
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w, err := k.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		p, ok := ev.Object.(*corev1.Pod)
		if !ok || ev.Type == watch.Deleted || !labels.SelectorFromSet(selector).Matches(labels.Set(p.Labels)) {
			continue
		}
		for _, c := range p.Status.ContainerStatuses {
			if term := c.LastTerminationState.Terminated; term != nil && strings.Contains(term.Message, want) {
				return time.Now()
			}
		}
	}
	var evidence strings.Builder
	if pods, err := k.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{FieldSelector: "spec.nodeName=" + node}); err == nil {
		for i := range pods.Items {
			fmt.Fprintf(&evidence, "\n  %s", kube.AgentStatus{Agent: kube.Agent{Name: pods.Items[i].Name}, Pod: &pods.Items[i]}.Describe())
		}
	}
	t.Fatalf("agent %s on %s never exited with %q; its pods:%s", agent, node, want, evidence.String())
	return time.Time{}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

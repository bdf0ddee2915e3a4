package resources_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/adminpass"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// TestAccNode_repairStoppedKubelet: the kubelet service of a node is stopped
// by hand (Stop-Service on the host). Once the control plane marks the Node
// NotReady, the refresh records it, the plan shows the repair (ready false
// to true, and a warning naming the node), the apply starts the service
// again over the node's transport and waits for Ready, and the plan after it
// is empty.
func TestAccNode_repairStoppedKubelet(t *testing.T) {
	acctest.RequireSandbox(t, "stops the kubelet service on the simulated host by hand")
	k := acctest.Kube(t)
	ns := createNamespace(t, k, "rp")
	image := acctest.Name("img-rp")
	node := fmt.Sprintf("rp-%d", acctest.Seq())
	config := flannelNodeConfig(ns, image, []string{node}, "")
	cli := acctest.NewCLI(t)
	if _, err := cli.Apply(config); err != nil {
		t.Fatal(err)
	}
	host := acctest.Sandbox.Hosts.ByName(strings.ToUpper(node))
	if host == nil {
		t.Fatalf("no simulated host %s", node)
	}
	// The node's own Administrator password (adminpass.ForNode), which the
	// repair below connects with again.
	if got := host.Config().AdminPassword; got != adminpass.ForNode(acctest.Sandbox.AdminPassword, node, "Administrator") || got == acctest.Sandbox.AdminPassword {
		t.Fatal("the node's Administrator password is not the one derived for it")
	}
	var out strings.Builder
	if code := host.Run(context.Background(), &winsim.Process{Path: `C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`,
		Args: []string{"-NoProfile", "-Command", "Stop-Service -Name kubelet"}, Stdout: &out, Stderr: &out}); code != 0 {
		t.Fatalf("Stop-Service kubelet: exit %d: %s", code, out.String())
	}
	stopped := time.Now()
	waitNodeReady(t, k, node, false)
	t.Logf("Node NotReady %s after the kubelet stopped (the controller manager's node-monitor-grace-period)", time.Since(stopped).Round(time.Second))

	planOut, plan := planOK(t, cli, config)
	expectOutput(t, planOut, `Warning: Windows node `+node+` is NotReady: the apply repairs it`)
	c := change(t, plan, "windows_node.n0")
	if after, ok := c.After.(map[string]any); !ok || after["ready"] != true {
		t.Errorf("the plan does not repair the node: after %v", c.After)
	}
	start := time.Now()
	if _, err := cli.Apply(config); err != nil {
		t.Fatalf("repair: %v", err)
	}
	t.Logf("repair applied in %s", time.Since(start).Round(time.Millisecond))
	if svc, ok := host.Service("kubelet"); !ok || svc.Status != "Running" {
		t.Errorf("kubelet service after the repair: %+v", svc)
	}
	if err := acctest.CheckNodeReady(t, node); err != nil {
		t.Error(err)
	}
	planOut, plan = planOK(t, cli, config)
	if strings.Contains(planOut, "Warning:") {
		t.Errorf("the plan after the repair warns:\n%s", planOut)
	}
	for _, rc := range plan.ResourceChanges {
		if !rc.Change.Actions.NoOp() {
			t.Errorf("the plan after the repair changes %s: %v\n%s", rc.Address, rc.Change.Actions, planOut)
		}
	}
}

// waitNodeReady waits on a watch until the Node's Ready condition is ready.
func waitNodeReady(t *testing.T, k *kube.Client, name string, ready bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w, err := k.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		if n, ok := ev.Object.(*corev1.Node); ok && ev.Type != watch.Deleted && kube.NodeIsReady(n) == ready {
			return
		}
	}
	t.Fatalf("Node %s never became ready=%v", name, ready)
}

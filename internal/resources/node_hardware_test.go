package resources_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// TestAccNode_hardware changes CPUs and memory in place: the template has no
// hot-add, so the node is drained (its pods move off), power-cycled, and
// comes back Ready and uncordoned with the new capacity; the disk grows in
// place; a smaller disk is refused at plan time.
func TestAccNode_hardware(t *testing.T) {
	acctest.RequireSandbox(t, "simulated host faults (a kubelet that never turns Ready)")
	acctest.PreCheck(t) // before the configs, which read the sandbox
	image := acctest.Name("img")
	node := acctest.NodeName("hw")
	const addr = "windows_node.n0"
	hw := func(cpus, mem, disk int) string {
		return fmt.Sprintf("  num_cpus = %d\n  memory_mb = %d\n  disk_size_gb = %d\n", cpus, mem, disk)
	}
	var vmID, bootID, ns, podUID string
	t.Cleanup(func() { acctest.Sandbox.Hosts.ClearFaults(node) })
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNodesDestroyed(t),
		Steps: []resource.TestStep{
			{
				Config: acctest.NodeConfig(image, []string{node}, hw(2, 4096, 60)),
				Check: func(s *terraform.State) error {
					vmID = s.RootModule().Resources[addr].Primary.ID
					info := acctest.ReadVM(t, vmID)
					if info.NumCPUs != 2 || info.MemoryMB != 4096 || info.Disks[0].SizeGB() != 60 {
						return fmt.Errorf("VM hardware: %d CPUs, %d MB, %d GB", info.NumCPUs, info.MemoryMB, info.Disks[0].SizeGB())
					}
					n, err := acctest.Kube(t).FindNode(context.Background(), node)
					if err != nil {
						return err
					}
					bootID = n.Status.NodeInfo.BootID
					// A pod that the drain must move off before the power cycle.
					k := acctest.Kube(t)
					ns = createNamespace(t, k, "hw")
					d := deployment("web", 1, corev1.PodSpec{
						NodeSelector: map[string]string{"kubernetes.io/hostname": node},
						Tolerations:  []corev1.Toleration{osWindowsToleration},
					})
					if _, err := k.AppsV1().Deployments(ns).Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
						return err
					}
					return acctest.Eventually(60*time.Second, "the pod Running", func(ctx context.Context) (bool, error) {
						pods, err := k.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
						if err != nil || len(pods.Items) != 1 {
							return false, err
						}
						podUID = string(pods.Items[0].UID)
						return pods.Items[0].Status.Phase == corev1.PodRunning, nil
					})
				},
			},
			{
				Config: acctest.NodeConfig(image, []string{node}, hw(4, 8192, 80)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("num_cpus"), knownvalue.Int64Exact(4)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("memory_mb"), knownvalue.Int64Exact(8192)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("disk_size_gb"), knownvalue.Int64Exact(80)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("ready"), knownvalue.Bool(true)),
				},
				Check: func(s *terraform.State) error {
					if id := s.RootModule().Resources[addr].Primary.ID; id != vmID {
						return fmt.Errorf("the VM was replaced (%s, was %s)", id, vmID)
					}
					info := acctest.ReadVM(t, vmID)
					if info.NumCPUs != 4 || info.MemoryMB != 8192 || info.Disks[0].SizeGB() != 80 {
						return fmt.Errorf("VM hardware: %d CPUs, %d MB, %d GB", info.NumCPUs, info.MemoryMB, info.Disks[0].SizeGB())
					}
					if err := acctest.CheckNodeReady(t, node); err != nil {
						return err
					}
					n, err := acctest.Kube(t).FindNode(context.Background(), node)
					if err != nil {
						return err
					}
					// The node really went through a power cycle, and its
					// kubelet reports the new hardware.
					if n.Status.NodeInfo.BootID == bootID {
						return fmt.Errorf("the node's boot ID did not change: no power cycle")
					}
					if cpu := n.Status.Capacity.Cpu().Value(); cpu != 4 {
						return fmt.Errorf("Node capacity cpu = %d, want 4", cpu)
					}
					// The drained pod comes back to the uncordoned node.
					return acctest.Eventually(60*time.Second, "the drained pod Running again", func(ctx context.Context) (bool, error) {
						pods, err := acctest.Kube(t).CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
						if err != nil || len(pods.Items) != 1 {
							return false, err
						}
						p := pods.Items[0]
						if string(p.UID) == podUID {
							return false, fmt.Errorf("pod %s was not evicted by the drain", p.Name)
						}
						return p.Status.Phase == corev1.PodRunning && p.Spec.NodeName == node, fmt.Errorf("pod %s: %s on %q", p.Name, p.Status.Phase, p.Spec.NodeName)
					})
				},
			},
			{
				Config:      acctest.NodeConfig(image, []string{node}, hw(4, 8192, 70)),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Disk cannot shrink.*has 80 GiB`),
			},
			{
				// After the power cycle the kubelet never reports Ready: the
				// update waits for a Ready condition from the kubelet that
				// runs now, not the one the stopped kubelet left behind.
				PreConfig: func() {
					acctest.Sandbox.Hosts.SetFaults(node, winsim.Faults{KubeletNeverReady: true})
				},
				Config: acctest.NodeConfig(image, []string{node}, hw(2, 8192, 80)+`  timeouts {
    update = "15s"
  }`),
				ExpectError: acctest.Wrapped(`(?s)waiting for the Node to be Ready after the power cycle.*registered but is not Ready`),
			},
		},
	})
}

package winnode_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	vimtypes "github.com/vmware/govmomi/vim25/types"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/networking"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/sandboxtest"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
	"github.com/wincluster/terraform-provider-windows/internal/winnode"
)

// The benchmarks start the sandbox on first use (sandboxtest.Shared) and
// TestMain stops it; the package's unit tests never start it.
func TestMain(m *testing.M) { sandboxtest.Main(m) }

// countingTransport counts the HTTP requests a client sends: each is one
// round trip to its server.
type countingTransport struct {
	next http.RoundTripper
	n    *atomic.Int64
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

// BenchmarkRefreshPoolHealth100 is the refresh of a windows_node_pool of
// 100 members (winnode.Manager, as the pool's Read calls it) against the
// sandbox's vCenter (vcsim) and real API server: 100 VMs, 100 Windows Nodes
// and their flannel agents' pods (200), made by the setup (not timed; the
// Nodes and pods are API objects, with no kubelet behind them). The
// provider's clients are the real ones, the Kubernetes one with the
// provider's own identity (examples/rbac), each with a counting
// http.RoundTripper under it. Sub-benchmarks:
//
//	before  ReadMany: the pool's refresh without health (the VMs and the
//	        Nodes), as before the health of members existed
//	after   ReadManyHealth: with each member's health (its agents, the
//	        cluster DNS's endpoints)
//
// Metrics, per refresh: vsphere-rt (SOAP round trips) and kube-rt (API
// requests). Targets: both constant in the number of members; kube-rt at
// most 4 with health (the Nodes, the networking's DaemonSets for its mode,
// the agents' pods, kube-dns's EndpointSlices).
func BenchmarkRefreshPoolHealth100(b *testing.B) {
	const members = 100
	sb := sandboxtest.Shared(b)
	ctx := context.Background()
	var vsRT, kubeRT atomic.Int64

	vc, err := vsphere.NewClient(ctx, vsphere.Config{Server: sb.VSphere.Server, User: sb.VSphere.User, Password: sb.VSphere.Password, CAFile: sb.CAFile})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = vc.Logout(ctx) }()
	soapClient := vc.Client.Client.Client // the SOAP client's http.Client, under the session's round trippers
	soapClient.Transport = countingTransport{next: soapClient.Transport, n: &vsRT}

	provider, err := kube.NewClient(ctx, kube.Config{ConfigPaths: []string{sb.ProviderKubeconfig}})
	if err != nil {
		b.Fatal(err)
	}
	cfg := rest.CopyConfig(provider.REST)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return countingTransport{next: rt, n: &kubeRT} }
	counted := &kube.Client{Interface: kubernetes.NewForConfigOrDie(cfg), REST: cfg}

	ns := "bench-health"
	vms := setupPool(ctx, b, sb, vc, ns, members)
	m := winnode.NewManager(vc, counted)
	// What the pool's Read passes: the networking's namespace, whose mode
	// it reads from the cluster (its DaemonSets).
	spec := winnode.Spec{Networking: ns}

	for _, bc := range []struct {
		name   string
		health bool
		read   func() (map[string]winnode.Observed, error)
	}{
		{"before", false, func() (map[string]winnode.Observed, error) { return m.ReadMany(ctx, vms) }},
		{"after", true, func() (map[string]winnode.Observed, error) { return m.ReadManyHealth(ctx, vms, spec) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			vsRT.Store(0)
			kubeRT.Store(0)
			n := 0
			for b.Loop() {
				got, err := bc.read()
				if err != nil {
					b.Fatal(err)
				}
				n++
				b.StopTimer()
				for name, obs := range got {
					if obs.VM == nil || obs.Node == nil || (obs.Health == nil) == bc.health {
						b.Fatalf("member %s read as VM %v, Node %v, health %v", name, obs.VM != nil, obs.Node != nil, obs.Health)
					}
					if bc.health && len(obs.Health.Agents) != 2 {
						b.Fatalf("member %s: agents %+v", name, obs.Health.Agents)
					}
				}
				if len(got) != members {
					b.Fatalf("%d members read, want %d", len(got), members)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(vsRT.Load())/float64(n), "vsphere-rt/op")
			b.ReportMetric(float64(kubeRT.Load())/float64(n), "kube-rt/op")
		})
	}
}

// setupPool makes n VMs in vcsim, n Windows Nodes Ready, the flannel
// networking's DaemonSets in namespace ns (labelled as
// windows_node_networking labels them, selecting no node: the pods are the
// setup's) and the agents' pods on each node Running and Ready, all removed
// when the benchmark ends, and returns the members' VM ids by node name.
func setupPool(ctx context.Context, b *testing.B, sb *sandbox.Sandbox, vc *vsphere.Client, ns string, n int) map[string]string {
	b.Helper()
	adminCfg, err := clientcmd.BuildConfigFromFlags("", sb.Kubeconfig)
	if err != nil {
		b.Fatal(err)
	}
	adminCfg.QPS, adminCfg.Burst = 200, 400 // the setup's hundreds of writes
	admin := kubernetes.NewForConfigOrDie(adminCfg)

	f := find.NewFinder(vc.Client.Client, true)
	dc, err := f.Datacenter(ctx, sb.VSphere.Datacenter)
	if err != nil {
		b.Fatal(err)
	}
	f.SetDatacenter(dc)
	folder, err := f.Folder(ctx, sb.VSphere.Folder)
	if err != nil {
		b.Fatal(err)
	}
	pool := object.NewResourcePool(vc.Client.Client, vimtypes.ManagedObjectReference{Type: "ResourcePool", Value: sb.VSphere.ResourcePoolID})
	ds := object.NewDatastore(vc.Client.Client, vimtypes.ManagedObjectReference{Type: "Datastore", Value: sb.VSphere.DatastoreID})
	dsName, err := ds.ObjectName(ctx)
	if err != nil {
		b.Fatal(err)
	}

	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		b.Fatal(err)
	}
	if _, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		b.Fatal(err)
	}
	mode, _ := networking.Lookup("flannel")
	for _, a := range mode.Agents() {
		ds := &appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Name: a.DaemonSet, Labels: map[string]string{kube.LabelManagedBy: kube.FieldManager, kube.LabelPartOf: kube.NetworkingPartOf}},
			Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: a.Selector},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: a.Selector}, Spec: corev1.PodSpec{
					NodeSelector: map[string]string{"bench.wincluster.io/no-node": "true"},
					Containers:   []corev1.Container{{Name: a.Name, Image: "registry.k8s.io/pause:3.10"}}}}},
		}
		if _, err := admin.AppsV1().DaemonSets(ns).Create(ctx, ds, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			b.Fatal(err)
		}
	}
	vms := map[string]string{}
	var refs []*object.VirtualMachine
	b.Cleanup(func() {
		for _, vm := range refs {
			if task, err := vm.Destroy(ctx); err == nil {
				_ = task.Wait(ctx)
			}
		}
		for name := range vms {
			_ = admin.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
		}
		_ = admin.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	})
	now := metav1.Now()
	for i := range n {
		name := fmt.Sprintf("bench-h-%03d", i)
		task, err := folder.CreateVM(ctx, vimtypes.VirtualMachineConfigSpec{Name: name, GuestId: "windows2019srvNext_64Guest", NumCPUs: 2, MemoryMB: 4096,
			Files: &vimtypes.VirtualMachineFileInfo{VmPathName: "[" + dsName + "]"}}, pool, nil)
		if err != nil {
			b.Fatal(err)
		}
		info, err := task.WaitForResult(ctx)
		if err != nil {
			b.Fatalf("creating VM %s: %v", name, err)
		}
		ref := info.Result.(vimtypes.ManagedObjectReference)
		refs = append(refs, object.NewVirtualMachine(vc.Client.Client, ref))
		vms[name] = ref.Value

		if _, err := admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels: map[string]string{kube.LabelOS: "windows"}}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		// Patched, as the controllers write the new Node too (its pod CIDR,
		// taints).
		status := corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				LastHeartbeatTime: now, LastTransitionTime: now}},
			NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.36.3", ContainerRuntimeVersion: "containerd://2.2.7"},
		}
		if _, err := admin.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, statusPatch(b, status), metav1.PatchOptions{}, "status"); err != nil {
			b.Fatal(err)
		}
		for _, a := range mode.Agents() {
			no := false
			pod, err := admin.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: a.DaemonSet + "-" + name, Labels: a.Selector},
				Spec: corev1.PodSpec{NodeName: name, AutomountServiceAccountToken: &no,
					Containers: []corev1.Container{{Name: a.Name, Image: "registry.k8s.io/pause:3.10"}}},
			}, metav1.CreateOptions{})
			if err != nil {
				b.Fatal(err)
			}
			status := corev1.PodStatus{Phase: corev1.PodRunning,
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}}}
			if _, err := admin.CoreV1().Pods(ns).Patch(ctx, pod.Name, types.StrategicMergePatchType, statusPatch(b, status), metav1.PatchOptions{}, "status"); err != nil {
				b.Fatal(err)
			}
		}
	}
	return vms
}

// statusPatch is a patch of an object's status.
func statusPatch(b *testing.B, status any) []byte {
	b.Helper()
	patch, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		b.Fatal(err)
	}
	return patch
}

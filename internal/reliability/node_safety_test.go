package reliability_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	vimtypes "github.com/vmware/govmomi/vim25/types"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
	"github.com/wincluster/terraform-provider-windows/internal/winnode"
)

// TestAccNode_killedBetweenCloneAndState kills the provider process
// (SIGKILL: no Ctrl-C, no chance to answer Terraform) the moment its
// CloneVM_Task reaches vCenter, which clones all the same: the VM exists,
// and the state never hears of it. The next plain apply must find that VM
// by the marks its clone spec gave it and adopt it: one VM for the node,
// the one in the state, no orphan beside it.
func TestAccNode_killedBetweenCloneAndState(t *testing.T) {
	defer logDuration(t, "SIGKILL between the clone and the state write", time.Now())
	cli, node, config := nodeToInterrupt(t, "kill")

	var (
		plugin atomic.Pointer[os.Process]
		killed atomic.Bool
	)
	remove := acctest.Sandbox.VSphere.OnCall(func(method, _ string) {
		if p := plugin.Load(); method == "CloneVM_Task" && p != nil && killed.CompareAndSwap(false, true) {
			// Before vCenter runs the call, so its answer never reaches
			// the provider.
			_ = p.Signal(syscall.SIGKILL)
		}
	})
	t.Cleanup(remove)
	out, err := cli.ApplyInPluginProcess(config, plugin.Store)
	remove()
	if !killed.Load() {
		t.Fatalf("the provider never cloned; apply: %v\n%s", err, out)
	}
	if err == nil {
		t.Fatalf("the apply whose provider was killed succeeded:\n%s", out)
	}
	vmID := waitForVMAt(t, node)
	st, err := cli.State()
	if err != nil {
		t.Fatal(err)
	}
	if r := acctest.StateResource(st, "windows_node.n0"); r != nil {
		t.Fatalf("the state holds the node after the kill (%v): the test did not kill the provider before the state write", r.AttributeValues["id"])
	}

	if out, err := cli.Apply(config); err != nil {
		t.Fatalf("the apply after the kill: %v\n%s", err, out)
	}
	if err := acctest.CheckNodeReady(t, node); err != nil {
		t.Error(err)
	}
	st, err = cli.State()
	if err != nil {
		t.Fatal(err)
	}
	r := acctest.StateResource(st, "windows_node.n0")
	if r == nil || r.AttributeValues["id"] != vmID {
		t.Errorf("the state holds %v, want the VM the killed apply cloned, %s, adopted", r, vmID)
	}
	vms, err := acctest.VSphere(t).ListVMs(context.Background(), vimtypes.ManagedObjectReference{})
	if err != nil {
		t.Fatal(err)
	}
	var named []string
	for _, vm := range vms {
		if vm.Name == node || vm.ExtraConfig[winnode.CloneNodeKey] == node {
			named = append(named, vm.ID())
		}
	}
	if !slices.Equal(named, []string{vmID}) {
		t.Errorf("VMs of node %s in vCenter: %v, want exactly %s", node, named, vmID)
	}
}

// waitForVMAt waits (on the property collector: the folder's children)
// until the VM of node is in the node folder, and returns its id.
func waitForVMAt(t *testing.T, node string) string {
	t.Helper()
	c := acctest.VSphere(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	folder, err := c.FindFolderByPath(ctx, acctest.NodeFolder, false)
	if err != nil {
		t.Fatal(err)
	}
	var id string
	err = property.Wait(ctx, property.DefaultCollector(c.Client.Client), folder, []string{"childEntity"}, func([]vimtypes.PropertyChange) bool {
		id, err = acctest.VMAt(t, node)
		return err != nil || id != ""
	})
	if err != nil || id == "" {
		t.Fatalf("no VM of %s appeared in %s: %v", node, acctest.NodeFolder, err)
	}
	return id
}

// TestAccNode_nodeNameOfAnotherVM: a Node of the node's name exists, made
// by this provider (its label) for another VM that still exists. The create
// must not delete it: the apply stops, and its diagnostic names the Node
// and why; so does a destroy, which drains nothing and destroys nothing.
func TestAccNode_nodeNameOfAnotherVM(t *testing.T) {
	defer logDuration(t, "a Node of the name belongs to another VM", time.Now())
	cli, node, config := nodeToInterrupt(t, "taken")
	ctx := context.Background()
	vc := acctest.VSphere(t)
	// The other machine: a VM that exists (the image's template will do).
	st, err := cli.State()
	if err != nil {
		t.Fatal(err)
	}
	image := acctest.StateResource(st, acctest.GoldenImageAddress)
	if image == nil {
		t.Fatal("no golden image in the state")
	}
	templatePath, _ := image.AttributeValues["template_path"].(string)
	other, err := vc.FindVMByPath(ctx, templatePath)
	if err != nil {
		t.Fatalf("the image's template %q: %v", templatePath, err)
	}
	info := acctest.ReadVM(t, other.Value)
	k := acctest.Kube(t)
	theirs, err := k.CoreV1().Nodes().Create(ctx, &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: node,
			Labels:      map[string]string{kube.LabelManagedBy: kube.FieldManager, kube.LabelOS: "windows"},
			Annotations: map[string]string{kube.VMAnnotation: kube.NodeVM(vc.VCenterID(), other.Value)}},
		Spec: corev1.NodeSpec{ProviderID: "vsphere://" + strings.ToLower(info.BIOSUUID)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{}) })

	out, err := cli.Apply(config)
	want := acctest.Wrapped(`(?s)checking the Node name: Node "` + node + `" belongs to another VM \(its windows.wincluster.io/vm annotation is "[^"]*/` + other.Value + `".*and VM ` + other.Value + ` still exists; nothing was deleted\. Give this node another name`)
	if err == nil || !want.MatchString(out) {
		t.Fatalf("the apply: %v; want a diagnostic matching %s:\n%s", err, want, out)
	}
	checkNodeKept(t, k, theirs)

	// The destroy of the node (its VM, tainted in the state) meets the same
	// Node: nothing is drained or deleted.
	vmID, _ := acctest.VMAt(t, node)
	out, err = cli.DestroyInterrupted(config, nil)
	want = acctest.Wrapped(`(?s)checking the Node: Node "` + node + `" belongs to another VM .*nothing was deleted\. It is not drained or deleted, and VM ` + vmID + ` is not destroyed`)
	if err == nil || !want.MatchString(out) {
		t.Fatalf("the destroy: %v; want a diagnostic matching %s:\n%s", err, want, out)
	}
	checkNodeKept(t, k, theirs)
	if id, _ := acctest.VMAt(t, node); id != vmID || vmID == "" {
		t.Errorf("the node's VM is %q after the refused destroy, want %q kept", id, vmID)
	}
	// The test's Node goes (cleanup, before the CLI's destroy).
}

// checkNodeKept fails unless the Node is the one the test made, untouched.
func checkNodeKept(t *testing.T, k *kube.Client, want *corev1.Node) {
	t.Helper()
	n, err := k.CoreV1().Nodes().Get(context.Background(), want.Name, metav1.GetOptions{})
	if err != nil || n.UID != want.UID || n.Spec.Unschedulable {
		t.Errorf("Node %s: %v (cordoned %v, UID %v): want the other VM's Node untouched", want.Name, err, n != nil && n.Spec.Unschedulable, n != nil && n.UID == want.UID)
	}
}

// TestAccNode_destroyWaitsForVolumeDetach: a PersistentVolume is attached
// to a Windows node (its VolumeAttachment, and its disk on the VM, as the
// vSphere CSI driver attaches one). The destroy drains the node and then
// waits for the VolumeAttachment to go before it touches the VM; the disk,
// not the template's, is detached before the VM is destroyed and survives
// it; the Node goes last.
func TestAccNode_destroyWaitsForVolumeDetach(t *testing.T) {
	defer logDuration(t, "destroy with an attached volume", time.Now())
	cli, node, config := nodeToInterrupt(t, "vol")
	if out, err := cli.Apply(config); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	ctx := context.Background()
	vmID, err := acctest.VMAt(t, node)
	if err != nil || vmID == "" {
		t.Fatalf("the node's VM: %q, %v", vmID, err)
	}
	disk, ds := addDataDisk(t, vmID, node)

	// The volume, as the CSI driver's external-attacher leaves it attached.
	k := acctest.Kube(t)
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: node + "-data"},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: "csi.vsphere.vmware.com", VolumeHandle: "fcd-" + node}},
		},
	}
	if _, err := k.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = k.CoreV1().PersistentVolumes().Delete(context.Background(), pv.Name, metav1.DeleteOptions{})
	})
	va, err := k.StorageV1().VolumeAttachments().Create(ctx, &storagev1.VolumeAttachment{
		ObjectMeta: metav1.ObjectMeta{Name: "csi-" + node},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: "csi.vsphere.vmware.com", NodeName: node,
			Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pv.Name}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	va.Status.Attached = true
	if _, err := k.StorageV1().VolumeAttachments().UpdateStatus(ctx, va, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	// What the provider does to the VM while the volume is attached.
	var (
		mu       sync.Mutex
		detached bool
		early    []string
		calls    []string
	)
	remove := acctest.Sandbox.VSphere.OnCall(func(method, obj string) {
		switch method {
		case "ShutdownGuest", "PowerOffVM_Task", "ReconfigVM_Task", "Destroy_Task":
		default:
			return
		}
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, method)
		if !detached {
			early = append(early, method)
		}
	})
	t.Cleanup(remove)
	done := make(chan struct{})
	var out string
	var destroyErr error
	go func() {
		defer close(done)
		out, destroyErr = cli.DestroyInterrupted(config, nil)
	}()
	if err := acctest.WaitForNode(t, node, 5*time.Minute, "cordoned by the destroy's drain", func(n *corev1.Node) bool { return n.Spec.Unschedulable }); err != nil {
		t.Fatal(err)
	}
	// The volume stays attached a while after the drain: a destroy that
	// does not wait for it shuts the guest down meanwhile (early).
	select {
	case <-done:
		t.Fatalf("the destroy ended while the volume was attached: %v\n%s", destroyErr, out)
	case <-time.After(5 * time.Second):
	}
	mu.Lock()
	detached = true
	mu.Unlock()
	if err := k.StorageV1().VolumeAttachments().Delete(ctx, va.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting the VolumeAttachment (the CSI driver's detach): %v: if it was gone already, the test could not tell a wait", err)
	}
	<-done
	remove()
	if destroyErr != nil {
		t.Fatalf("the destroy: %v\n%s", destroyErr, out)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(early) > 0 {
		t.Errorf("the destroy called %v on the VM while the volume was attached", early)
	}
	if i, j := slices.Index(calls, "ReconfigVM_Task"), slices.Index(calls, "Destroy_Task"); i < 0 || j < i {
		t.Errorf("calls %v: want the data disk detached (ReconfigVM_Task) before Destroy_Task", calls)
	}
	if id, _ := acctest.VMAt(t, node); id != "" {
		t.Errorf("the VM %s is left", id)
	}
	if _, err := k.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{}); err == nil {
		t.Error("the Node is left")
	}
	if _, err := ds.Stat(ctx, disk); err != nil {
		t.Errorf("the data disk %s did not survive the destroy: %v", disk, err)
	}
}

// addDataDisk adds a new 1 GiB disk to the VM in the datastore's fcd/
// folder, where the vSphere CSI driver keeps its volumes, and returns its
// path in the datastore.
func addDataDisk(t *testing.T, vmID, node string) (string, *object.Datastore) {
	t.Helper()
	ctx := context.Background()
	c := acctest.VSphere(t)
	vm := object.NewVirtualMachine(c.Client.Client, vsphere.VMRef(vmID))
	devices, err := vm.Device(ctx)
	if err != nil {
		t.Fatal(err)
	}
	disks := devices.SelectByType((*vimtypes.VirtualDisk)(nil))
	if len(disks) == 0 {
		t.Fatal("the VM has no disk")
	}
	first := disks[0].(*vimtypes.VirtualDisk).Backing.(*vimtypes.VirtualDiskFlatVer2BackingInfo)
	ds := object.NewDatastore(c.Client.Client, *first.Datastore)
	name, err := ds.ObjectName(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ds.InventoryPath = "/DC0/datastore/" + name // Stat names the datastore by it
	dc, err := object.NewSearchIndex(c.Client.Client).FindByInventoryPath(ctx, "/DC0")
	if err != nil || dc == nil {
		t.Fatalf("datacenter DC0: %v", err)
	}
	datacenter := dc.(*object.Datacenter)
	if err := object.NewFileManager(c.Client.Client).MakeDirectory(ctx, "["+name+"] fcd", datacenter, true); err != nil {
		t.Fatal(err)
	}
	ctrl, err := devices.FindDiskController("")
	if err != nil {
		t.Fatal(err)
	}
	path := "fcd/" + node + "-data.vmdk"
	disk := devices.CreateDisk(ctrl, ds.Reference(), "["+name+"] "+path)
	disk.CapacityInKB = 1 << 20
	if err := vm.AddDevice(ctx, disk); err != nil {
		t.Fatal(err)
	}
	if _, err := ds.Stat(ctx, path); err != nil {
		t.Fatalf("the data disk was not created: %v", err)
	}
	t.Cleanup(func() {
		if task, err := object.NewFileManager(c.Client.Client).DeleteDatastoreFile(context.Background(), "["+name+"] "+path, datacenter); err == nil {
			_ = task.Wait(context.Background())
		}
	})
	return path, ds
}

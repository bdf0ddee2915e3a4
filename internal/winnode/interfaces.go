package winnode

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/remote"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// VSphere is what a node needs of vCenter, its VMs named by managed object
// id ("vm-42"). NewManager adapts internal/vsphere to it (adapter.go). A
// missing VM or folder is a *vsphere.NotFoundError.
type VSphere interface {
	// CloneNode clones the template into the node's VM, powered off, to be
	// customized (sysprep) at its first boot. A VM that exists but whose
	// identity could not be read in full comes back with its VMID and the
	// error, so that it is tracked.
	CloneNode(ctx context.Context, req CloneRequest) (Identity, error)
	PowerOn(ctx context.Context, vmID string) error
	// WaitForCustomization waits for the guest customization to finish.
	WaitForCustomization(ctx context.Context, vmID string) error
	// WaitForIP waits for the guest's IPv4 address.
	WaitForIP(ctx context.Context, vmID string) (string, error)
	// Reconfigure changes CPUs and memory: a *vsphere.PowerCycleRequiredError
	// when the running VM cannot take the change.
	Reconfigure(ctx context.Context, vmID string, hw vsphere.Hardware) error
	// GrowDisk grows the VM's first disk to sizeGB.
	GrowDisk(ctx context.Context, vmID string, sizeGB int64) error
	// ShutdownGuest asks the guest to shut down and returns (VMware Tools).
	ShutdownGuest(ctx context.Context, vmID string) error
	WaitForPoweredOff(ctx context.Context, vmID string) error
	// WaitForGuestRestart waits until VMware Tools in the guest stops and
	// runs again: the guest restarted.
	WaitForGuestRestart(ctx context.Context, vmID string) error
	PowerOff(ctx context.Context, vmID string) error
	Destroy(ctx context.Context, vmID string) error

	// Reading and finding VMs: a refresh, an import, a list.
	ReadVM(ctx context.Context, vmID string) (*vsphere.VMInfo, error)
	// ReadVMs reads many VMs in one vCenter round trip; a VM that no longer
	// exists is left out of the result.
	ReadVMs(ctx context.Context, vmIDs []string) (map[string]*vsphere.VMInfo, error)
	// InventoryPaths reads the inventory paths of VMs (one vCenter round
	// trip for all of them); a VM whose path vCenter does not give up to the
	// root folder is left out.
	InventoryPaths(ctx context.Context, vmIDs []string) (map[string]string, error)
	// FindVMByUUID finds a VM by its BIOS UUID, or by its instance UUID.
	FindVMByUUID(ctx context.Context, uuid string, instance bool) (string, error)
	FindVMByPath(ctx context.Context, inventoryPath string) (string, error)
	// ListVMs lists the VMs and templates in a folder (an inventory path)
	// and its subfolders; "" lists the whole inventory.
	ListVMs(ctx context.Context, folder string) ([]*vsphere.VMInfo, error)

	// GuestOperations is the way into a VM's guest through vCenter, for
	// the vmtools transport.
	GuestOperations(vmID string) *remote.GuestOperations

	// Ownership and removal.
	// VCenterID is the vCenter's instance UUID (vsphere.Client.VCenterID).
	VCenterID() string
	// VMGone is true only when vCenter says the VM id does not exist
	// (vsphere.Client.VMGone), never for a VM the session cannot see.
	VMGone(ctx context.Context, vmID string) (bool, error)
	// FindClone reads the VM named req.Name directly in req.Folder: where
	// the clone goes. None is a *vsphere.NotFoundError.
	FindClone(ctx context.Context, req CloneRequest) (*vsphere.VMInfo, error)
	// SetMetadata makes the VM's tags and custom attributes want's, given
	// had's (vsphere.Client.SetMetadata); SetAnnotation sets its notes.
	SetMetadata(ctx context.Context, vmID string, had, want vsphere.Metadata) error
	SetAnnotation(ctx context.Context, vmID, text string) error
	// AttachedTags lists the tag ids attached to the VM, sorted
	// (vsphere.Client.AttachedTags).
	AttachedTags(ctx context.Context, vmID string) ([]string, error)
	// DetachDisks removes disks from the VM, keeping their files.
	DetachDisks(ctx context.Context, vmID string, keys []int32) error
}

// CloneRequest is a node's VM: the template it clones, where it goes
// (inventory path and managed object ids, which the adapter resolves), its
// hardware, its note, and the customization of its first boot.
type CloneRequest struct {
	Template, Name, Folder                         string
	ResourcePoolID, DatastoreID, NetworkID, HostID string
	NumCPUs                                        int32
	MemoryMB, DiskSizeGB                           int64
	LinkedClone                                    bool
	Annotation                                     string
	ExtraConfig                                    map[string]string
	// Site: its datastore cluster, storage policy, extra disks and NICs,
	// set by the clone; its tags and custom attributes, right after.
	Site    SiteVM
	Sysprep vsphere.Sysprep
}

// Kube is what a node needs of its Kubernetes cluster; *kube.Client is it.
// A missing Node is a *kube.NotFoundError.
type Kube interface {
	// What a join is configured with.
	DiscoverNetwork(ctx context.Context) (*kube.ClusterNetwork, error)
	ClusterCA() ([]byte, error)
	ObservedNetworkingMode(ctx context.Context, namespace string) (string, error)

	// The join credential.
	CreateBootstrapToken(ctx context.Context, ttl time.Duration, description string) (token, id string, err error)
	RefreshBootstrapToken(ctx context.Context, id string, ttl time.Duration) error
	DeleteStaleBootstrapTokens(ctx context.Context, description string) error
	DeleteBootstrapToken(ctx context.Context, id string) error

	// Nodes.
	FindNode(ctx context.Context, name string) (*corev1.Node, error)
	WindowsNodes(ctx context.Context) ([]corev1.Node, error)
	WaitForNodeReady(ctx context.Context, name string) (*corev1.Node, error)
	WaitForNodeReadyAgain(ctx context.Context, prev *corev1.Node) (*corev1.Node, error)
	WaitForNodePodCIDR(ctx context.Context, name string) (string, error)
	WaitForAgentsReady(ctx context.Context, node, namespace string, agents []kube.Agent) ([]*corev1.Pod, error)
	WaitForAgentsReadySince(ctx context.Context, node, namespace string, agents []kube.Agent, since time.Time) ([]*corev1.Pod, error)
	ProbeNetwork(ctx context.Context, req kube.ProbeRequest) ([]kube.ProbePath, error)
	// HostProcessAgentsOn lists the Running HostProcess DaemonSet pods on
	// a node: a mode without agents of its own (none) is probed once the
	// cluster's CNI runs its Windows agents there.
	HostProcessAgentsOn(ctx context.Context, node string) ([]string, error)
	// ReadHealthSnapshot reads what nodes' health is judged with besides
	// their Nodes: the cluster DNS's endpoints and the agents' pods.
	ReadHealthSnapshot(ctx context.Context, namespace string, agents []kube.Agent) (*kube.HealthSnapshot, error)
	// RestartAgents evicts agent pods so their DaemonSets make them anew.
	RestartAgents(ctx context.Context, pods []*corev1.Pod) error
	ApplyNodeSettings(ctx context.Context, name string, s kube.NodeSettings) (*corev1.Node, error)
	CordonNode(ctx context.Context, name string, cordon bool) error
	MarkCordonedForPowerCycle(ctx context.Context, name string, mark bool) error
	DrainNode(ctx context.Context, name string, opts kube.DrainOptions) error
	// DeleteNodeUID deletes the Node only while it is the one read (uid).
	DeleteNodeUID(ctx context.Context, name string, uid types.UID) error
	// WaitForVolumesDetached watches VolumeAttachments until none is
	// attached to the node.
	WaitForVolumesDetached(ctx context.Context, node string, waiting func(attached []string)) error
}

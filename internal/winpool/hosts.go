package winpool

import (
	"context"
	"fmt"

	vimtypes "github.com/vmware/govmomi/vim25/types"

	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// RulePrefix names a pool's DRS anti-affinity rule: <RulePrefix><prefix>.
const RulePrefix = "windows-node-pool-"

// Hosts is what keeping a pool's members on different ESXi hosts needs of
// vCenter: one DRS VM anti-affinity rule. NewHosts adapts internal/vsphere
// to it.
type Hosts interface {
	// SetVMAntiAffinity keeps the rule called name, on the DRS cluster that
	// owns the resource pool, listing exactly the VMs vmIDs (managed object
	// ids); fewer than two remove it.
	SetVMAntiAffinity(ctx context.Context, resourcePoolID, name string, vmIDs []string) error
}

// NewHosts is the Hosts of a vCenter session.
func NewHosts(c *vsphere.Client) Hosts { return vsphereHosts{c} }

type vsphereHosts struct{ c *vsphere.Client }

func (h vsphereHosts) SetVMAntiAffinity(ctx context.Context, resourcePoolID, name string, vmIDs []string) error {
	var vms []vimtypes.ManagedObjectReference
	for _, id := range vmIDs {
		vms = append(vms, vsphere.VMRef(id))
	}
	pool := vimtypes.ManagedObjectReference{Type: "ResourcePool", Value: resourcePoolID}
	return h.c.SetVMAntiAffinity(ctx, pool, name, vms)
}

// SpreadOverHosts keeps the pool's DRS VM anti-affinity rule (RulePrefix
// and the pool's prefix, on the cluster of its resource pool) in step with
// it: with AntiAffinity the rule lists the VMs of the members that have
// one, otherwise it is removed. had says whether the pool had the rule
// before: a pool that neither has nor had it leaves vCenter alone. A new
// pool passes true, so that it removes a rule of its name left behind.
func SpreadOverHosts(ctx context.Context, hosts Hosts, p Pool, members []Member, had bool) error {
	if !p.AntiAffinity && !had {
		return nil
	}
	var vms []string
	for _, m := range members {
		if p.AntiAffinity && m.VMID != "" && m.Health != VMMissing {
			vms = append(vms, m.VMID)
		}
	}
	if err := hosts.SetVMAntiAffinity(ctx, p.Template.ResourcePoolID, RulePrefix+p.Prefix, vms); err != nil {
		return fmt.Errorf("anti_affinity: %w", err)
	}
	return nil
}

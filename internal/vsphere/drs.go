package vsphere

import (
	"context"
	"fmt"
	"slices"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// SetVMAntiAffinity keeps the DRS VM anti-affinity rule called name, on the
// cluster that owns resourcePool, listing exactly vms: it creates the rule,
// changes its VMs, or removes it once fewer than two VMs are left (a rule
// keeps VMs apart, so it needs two: vCenter and hashicorp/vsphere's
// vsphere_compute_cluster_vm_anti_affinity_rule ask for two as well). The
// rule is not mandatory: DRS places the VMs on different hosts where it
// can, and never refuses a power-on for it. One read and, when the rule
// changes, one reconfigure task.
func (c *Client) SetVMAntiAffinity(ctx context.Context, resourcePool types.ManagedObjectReference, name string, vms []types.ManagedObjectReference) error {
	cluster, existing, err := c.antiAffinityRule(ctx, resourcePool, name)
	if err != nil {
		return err
	}
	spec := types.ClusterRuleSpec{}
	switch {
	case len(vms) < 2 && existing == nil:
		return nil
	case len(vms) < 2:
		spec.Operation, spec.RemoveKey = types.ArrayUpdateOperationRemove, existing.Key
	case existing == nil:
		spec.Operation = types.ArrayUpdateOperationAdd
		spec.Info = &types.ClusterAntiAffinityRuleSpec{ClusterRuleInfo: types.ClusterRuleInfo{
			Name: name, Enabled: types.NewBool(true), Mandatory: types.NewBool(false), UserCreated: types.NewBool(true),
		}, Vm: vms}
	case sameRefs(existing.Vm, vms):
		return nil
	default:
		rule := *existing
		rule.Vm = vms
		spec.Operation, spec.Info = types.ArrayUpdateOperationEdit, &rule
	}
	task, err := object.NewClusterComputeResource(c.Client.Client, cluster).
		Reconfigure(ctx, &types.ClusterConfigSpecEx{RulesSpec: []types.ClusterRuleSpec{spec}}, true)
	if _, err = c.waitTask(ctx, task, err); err != nil {
		return fmt.Errorf("setting the VM anti-affinity rule %q on cluster %s: %w", name, cluster.Value, err)
	}
	return nil
}

// VMAntiAffinity returns the VMs of the anti-affinity rule called name on
// the cluster that owns resourcePool; nil when there is none.
func (c *Client) VMAntiAffinity(ctx context.Context, resourcePool types.ManagedObjectReference, name string) ([]types.ManagedObjectReference, error) {
	_, rule, err := c.antiAffinityRule(ctx, resourcePool, name)
	if rule == nil {
		return nil, err
	}
	return rule.Vm, nil
}

// antiAffinityRule finds the cluster that owns resourcePool and its VM
// anti-affinity rule called name (nil when there is none).
func (c *Client) antiAffinityRule(ctx context.Context, resourcePool types.ManagedObjectReference, name string) (types.ManagedObjectReference, *types.ClusterAntiAffinityRuleSpec, error) {
	var rp mo.ResourcePool
	if err := c.retrieveOne(ctx, resourcePool, []string{"owner"}, &rp); err != nil {
		return rp.Owner, nil, notFoundOr(err, "resource pool", resourcePool, "reading the cluster of")
	}
	if rp.Owner.Type != "ClusterComputeResource" {
		return rp.Owner, nil, fmt.Errorf("resource pool %s belongs to a standalone host (%s), not a DRS cluster: a VM anti-affinity rule needs a cluster; place the pool in a cluster's resource pool, or spread it with failure_domains", resourcePool.Value, rp.Owner.Value)
	}
	var cluster mo.ClusterComputeResource
	if err := c.retrieveOne(ctx, rp.Owner, []string{"configurationEx"}, &cluster); err != nil {
		return rp.Owner, nil, fmt.Errorf("reading the rules of cluster %s: %w", rp.Owner.Value, err)
	}
	if cfg, ok := cluster.ConfigurationEx.(*types.ClusterConfigInfoEx); ok {
		for _, r := range cfg.Rule {
			if a, ok := r.(*types.ClusterAntiAffinityRuleSpec); ok && a.Name == name {
				return rp.Owner, a, nil
			}
		}
	}
	return rp.Owner, nil, nil
}

func sameRefs(a, b []types.ManagedObjectReference) bool {
	key := func(r types.ManagedObjectReference) string { return r.Value }
	ka, kb := make([]string, len(a)), make([]string, len(b))
	for i := range a {
		ka[i] = key(a[i])
	}
	for i := range b {
		kb[i] = key(b[i])
	}
	slices.Sort(ka)
	slices.Sort(kb)
	return slices.Equal(ka, kb)
}

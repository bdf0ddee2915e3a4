package vcsim

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// computeResourceAlias answers for a cluster named as a ComputeResource
// (its supertype), as vCenter does: vCenter resolves a managed object
// reference by its id, vcsim by type and id. hashicorp/vsphere names every
// compute resource so when it looks a pool's owner up for the guest OS
// family of a customized clone (computeresource.BaseFromReference calls
// StandaloneFromID for a ClusterComputeResource too), and failed on the
// sandbox's cluster pool with "The object has already been deleted or has
// not been completely created". The property collector reads the cluster
// through Get (the simulator's hook for registry objects that stand for
// another), and echoes the reference as given, as vCenter does: the
// provider asserts an *object.ComputeResource.
//
// The simulator's searches look through every registry object's first
// field for the managed object it wraps (getManagedObject), so the alias
// starts with an empty ComputeResource: a named field, not an embedded one,
// so that the alias is no mo.Entity and no inventory walk counts it.
type computeResourceAlias struct {
	Empty   mo.ComputeResource
	cluster *simulator.ClusterComputeResource
}

func (a *computeResourceAlias) Reference() types.ManagedObjectReference { return a.Empty.Self }

// Get is the simulator's hook (property collector's getObject).
func (a *computeResourceAlias) Get() mo.Reference { return a.cluster }

// aliasClusters registers every cluster under its ComputeResource name.
func (s *Server) aliasClusters() {
	m := s.Model.Map()
	for _, e := range m.All("ClusterComputeResource") {
		cluster, ok := e.(*simulator.ClusterComputeResource)
		if !ok {
			continue
		}
		alias := &computeResourceAlias{cluster: cluster}
		alias.Empty.Self = types.ManagedObjectReference{Type: "ComputeResource", Value: cluster.Self.Value}
		m.Put(alias)
	}
}

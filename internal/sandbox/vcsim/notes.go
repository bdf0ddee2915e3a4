package vcsim

import (
	"sync"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// cloneNotes gives a clone the notes vCenter gives it and vcsim does not:
// the clone spec's config.annotation, else its source's (vCenter applies a
// clone's config spec to the copy of the source's configuration:
// VirtualMachineCloneSpec.config, "Specifies the configuration settings for
// the virtual machine"; vcsim's CloneVM_Task builds a new configuration
// with neither, simulator/virtual_machine.go). The clone's request is
// remembered by folder and name, and its VM given the notes when vcsim
// names it, the last step of its creation (a Registry handler's
// UpdateObject: the VM is registered before it has a name).
type cloneNotes struct {
	mu      sync.Mutex
	pending map[cloneKey]string
}

type cloneKey struct {
	folder types.ManagedObjectReference
	name   string
}

var cloneNotesRef = types.ManagedObjectReference{Type: "SandboxCloneNotes", Value: "sandbox-clone-notes"}

func (n *cloneNotes) Reference() types.ManagedObjectReference { return cloneNotesRef }

// expect remembers the notes of a clone about to be made.
func (n *cloneNotes) expect(src *simulator.VirtualMachine, req *types.CloneVM_Task) {
	notes := ""
	if src.Config != nil {
		notes = src.Config.Annotation
	}
	if req.Spec.Config != nil && req.Spec.Config.Annotation != "" {
		notes = req.Spec.Config.Annotation
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.pending == nil {
		n.pending = map[cloneKey]string{}
	}
	n.pending[cloneKey{req.Folder, req.Name}] = notes
}

// UpdateObject gives a newly named clone its notes.
func (n *cloneNotes) UpdateObject(_ *simulator.Context, obj mo.Reference, changes []types.PropertyChange) {
	// The registry hands its handlers the managed object itself.
	vm, ok := obj.(*mo.VirtualMachine)
	if !ok || vm.Parent == nil || vm.Config == nil {
		return
	}
	for _, c := range changes {
		name, isName := c.Val.(string)
		if c.Name != "name" || !isName {
			continue
		}
		k := cloneKey{*vm.Parent, name}
		n.mu.Lock()
		notes, found := n.pending[k]
		delete(n.pending, k)
		n.mu.Unlock()
		if found {
			vm.Config.Annotation = notes
		}
	}
}

func (n *cloneNotes) PutObject(*simulator.Context, mo.Reference)                    {}
func (n *cloneNotes) RemoveObject(*simulator.Context, types.ManagedObjectReference) {}

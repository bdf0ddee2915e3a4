package vcsim

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// TestCloneFidelity checks the clone behaviours the sandbox adds to vcsim:
// the source's extraConfig is carried over, every clone gets fresh UUIDs
// (also when recreated at the same path), and hooks can refuse a clone with
// a message.
func TestCloneFidelity(t *testing.T) {
	s, ca := startServer(t)
	ctx := t.Context()
	c, err := connect(ctx, t, s, ca, url.UserPassword(s.User, s.Password))
	if err != nil {
		t.Fatal(err)
	}
	f := find.NewFinder(c)
	tmpl, err := f.VirtualMachine(ctx, s.Templates["2019"])
	if err != nil {
		t.Fatal(err)
	}
	folder, err := f.Folder(ctx, s.Folder)
	if err != nil {
		t.Fatal(err)
	}
	pool := types.ManagedObjectReference{Type: "ResourcePool", Value: s.ResourcePoolID}
	clone := func(name string) (*object.VirtualMachine, error) {
		task, err := tmpl.Clone(ctx, folder, name, types.VirtualMachineCloneSpec{Location: types.VirtualMachineRelocateSpec{Pool: &pool}})
		if err != nil {
			return nil, err
		}
		res, err := task.WaitForResult(ctx)
		if err != nil {
			return nil, err
		}
		return object.NewVirtualMachine(c, res.Result.(types.ManagedObjectReference)), nil
	}
	read := func(vm *object.VirtualMachine) *types.VirtualMachineConfigInfo {
		var m mo.VirtualMachine
		if err := vm.Properties(ctx, vm.Reference(), []string{"config"}, &m); err != nil {
			t.Fatal(err)
		}
		return m.Config
	}

	vm, err := clone("carry")
	if err != nil {
		t.Fatal(err)
	}
	first := read(vm)
	var build string
	for _, o := range first.ExtraConfig {
		if ov := o.GetOptionValue(); ov.Key == BuildKey {
			build, _ = ov.Value.(string)
		}
	}
	if build != "10.0.17763" {
		t.Errorf("clone's %s = %q, want the template's 10.0.17763", BuildKey, build)
	}
	task, err := vm.Destroy(ctx)
	if err == nil {
		err = task.Wait(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	vm, err = clone("carry")
	if err != nil {
		t.Fatal(err)
	}
	second := read(vm)
	if second.Uuid == first.Uuid || second.InstanceUuid == first.InstanceUuid {
		t.Errorf("a VM recreated at the same path kept its UUIDs (%s, %s)", second.Uuid, second.InstanceUuid)
	}

	s.OnClone(func(_ *simulator.VirtualMachine, req *types.CloneVM_Task) error {
		if req.Name == "refused" {
			return errors.New("sandbox: no, because of this")
		}
		return nil
	})
	if _, err := clone("refused"); err == nil || !strings.Contains(err.Error(), "no, because of this") {
		t.Errorf("refused clone: %v", err)
	}
	if _, err := clone("accepted"); err != nil {
		t.Errorf("clone after a refusal: %v", err)
	}
}

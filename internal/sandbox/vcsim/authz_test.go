package vcsim

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/guest"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/pki"
)

const (
	testProvider     = "terraform-provider-windows@vsphere.local"
	testProviderPass = "Pr0vider-pw!x"
)

func startEnforcing(t *testing.T) (*Server, *pki.CA) {
	t.Helper()
	ca, err := pki.NewCA("test-ca")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.ServingCertificate("127.0.0.1", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Start(t.Context(), Options{
		Certificate: cert, RootCAs: ca.Pool(),
		User: "administrator@vsphere.local", Password: "S3cret-pw!x",
		ProviderUser: testProvider, ProviderPassword: testProviderPass, Logf: t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, ca
}

// world is what a provider-like client finds: the template, folders and
// placement.
type world struct {
	c                        *vim25.Client
	template                 *object.VirtualMachine
	nodes, templates, golden *object.Folder
	pool                     types.ManagedObjectReference
	ds                       types.ManagedObjectReference
}

func providerWorld(t *testing.T, s *Server, ca *pki.CA) world {
	t.Helper()
	c, err := connect(t.Context(), t, s, ca, url.UserPassword(testProvider, testProviderPass))
	if err != nil {
		t.Fatalf("the provider's account cannot log in: %v", err)
	}
	f := find.NewFinder(c, true)
	tmpl, err := f.VirtualMachine(t.Context(), s.Templates["2022"])
	if err != nil {
		t.Fatalf("the provider's account cannot find the template: %v", err)
	}
	w := world{c: c, template: tmpl,
		pool: types.ManagedObjectReference{Type: "ResourcePool", Value: s.ResourcePoolID},
		ds:   types.ManagedObjectReference{Type: "Datastore", Value: s.DatastoreID}}
	for path, dst := range map[string]**object.Folder{s.Folder: &w.nodes, s.TemplateFolder: &w.templates, s.GoldenFolder: &w.golden} {
		if *dst, err = f.Folder(t.Context(), path); err != nil {
			t.Fatalf("finding %s: %v", path, err)
		}
	}
	return w
}

func cloneSpec(w world, customize bool) types.VirtualMachineCloneSpec {
	spec := types.VirtualMachineCloneSpec{
		Location: types.VirtualMachineRelocateSpec{Pool: &w.pool, Datastore: &w.ds},
		Config:   &types.VirtualMachineConfigSpec{NumCPUs: 4, ExtraConfig: []types.BaseOptionValue{&types.OptionValue{Key: "k", Value: "v"}}},
	}
	if customize {
		spec.Customization = &types.CustomizationSpec{Identity: &types.CustomizationSysprep{},
			NicSettingMap: []types.CustomizationAdapterMapping{{Adapter: types.CustomizationIPSettings{Ip: &types.CustomizationDhcpIpGenerator{}}}}}
	}
	return spec
}

func clone(t *testing.T, w world, folder *object.Folder, name string, spec types.VirtualMachineCloneSpec) (*object.VirtualMachine, error) {
	t.Helper()
	task, err := w.template.Clone(t.Context(), folder, name, spec)
	if err != nil {
		return nil, err
	}
	res, err := task.WaitForResult(t.Context())
	if err != nil {
		return nil, err
	}
	return object.NewVirtualMachine(w.c, res.Result.(types.ManagedObjectReference)), nil
}

// wantNoPermission: err is vCenter's NoPermission naming privilege and
// object.
func wantNoPermission(t *testing.T, err error, privilege string, object types.ManagedObjectReference) {
	t.Helper()
	var np *types.NoPermission
	if _, ok := fault.As(err, &np); err == nil || !ok {
		t.Fatalf("err = %v, want NoPermission", err)
	}
	if np.PrivilegeId != privilege || np.Object == nil || *np.Object != object {
		t.Fatalf("NoPermission names %s on %v, want %s on %s", np.PrivilegeId, np.Object, privilege, object)
	}
}

// The provider's account clones, customizes and manages nodes with the
// documented roles alone, each where the guide grants it.
func TestProviderRolesAllowTheDocumentedWork(t *testing.T) {
	s, ca := startEnforcing(t)
	w := providerWorld(t, s, ca)
	vm, err := clone(t, w, w.nodes, "node-1", cloneSpec(w, true))
	if err != nil {
		t.Fatalf("a node clone with the documented roles: %v", err)
	}
	ctx := t.Context()
	for _, step := range []struct {
		what string
		run  func() error
	}{
		{"power on", func() error { return waitTask(vm.PowerOn(ctx)) }},
		{"reconfigure memory", func() error { return waitTask(vm.Reconfigure(ctx, types.VirtualMachineConfigSpec{MemoryMB: 8192})) }},
		{"power off", func() error { return waitTask(vm.PowerOff(ctx)) }},
		{"destroy", func() error { return waitTask(vm.Destroy(ctx)) }},
	} {
		if err := step.run(); err != nil {
			t.Errorf("%s of a node: %v", step.what, err)
		}
	}
	// A golden image: a build VM in the golden images' folder, marked as
	// a template there.
	build, err := clone(t, w, w.golden, "build-1", cloneSpec(w, true))
	if err != nil {
		t.Fatalf("a golden image's build clone: %v", err)
	}
	if err := build.MarkAsTemplate(ctx); err != nil {
		t.Errorf("marking the golden image as a template: %v", err)
	}
}

func waitTask(task *object.Task, err error) error {
	if err != nil {
		return err
	}
	return task.Wait(context.Background())
}

// What the roles leave out is refused with the privilege and the object:
// cloning into the templates' folder, a node's clone once an
// administrator takes Customize out of the templates' role, guest
// operations on a template, and a method the sandbox does not model.
func TestProviderRolesRefuse(t *testing.T) {
	s, ca := startEnforcing(t)
	w := providerWorld(t, s, ca)
	ctx := t.Context()

	_, err := clone(t, w, w.templates, "into-templates", cloneSpec(w, false))
	wantNoPermission(t, err, "VirtualMachine.Inventory.CreateFromExisting", w.templates.Reference())

	// A node VM: may not be cloned (no Clone on the node folder).
	vm, err := clone(t, w, w.nodes, "node-1", cloneSpec(w, false))
	if err != nil {
		t.Fatal(err)
	}
	task, err := vm.Clone(ctx, w.nodes, "copy-of-node", cloneSpec(w, true))
	if err == nil {
		_, err = task.WaitForResult(ctx)
	}
	wantNoPermission(t, err, "VirtualMachine.Provisioning.Clone", vm.Reference())

	pm, err := guest.NewOperationsManager(w.c, w.template.Reference()).ProcessManager(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = pm.ListProcesses(ctx, &types.NamePasswordAuthentication{Username: "Administrator", Password: "x"}, nil)
	wantNoPermission(t, err, "VirtualMachine.GuestOperations.Query", w.template.Reference())

	_, err = w.nodes.CreateVM(ctx, types.VirtualMachineConfigSpec{Name: "new"}, object.NewResourcePool(w.c, w.pool), nil)
	if err == nil || !fault.Is(err, &types.NotSupported{}) || !strings.Contains(err.Error(), "CreateVM_Task") {
		t.Errorf("an unmodelled method: err = %v, want NotSupported naming it", err)
	}

	// An administrator takes Customize out of the templates' role: the
	// next customized clone fails on the template, naming it.
	admin, err := connect(ctx, t, s, ca, url.UserPassword(s.User, s.Password))
	if err != nil {
		t.Fatal(err)
	}
	am := object.NewAuthorizationManager(admin)
	roles, err := am.RoleList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	role := roles.ByName("windows-templates")
	privs := slices.DeleteFunc(slices.Clone(role.Privilege), func(p string) bool { return p == "VirtualMachine.Provisioning.Customize" })
	if err := am.UpdateRole(ctx, role.RoleId, role.Name, privs); err != nil {
		t.Fatal(err)
	}
	_, err = clone(t, w, w.nodes, "node-2", cloneSpec(w, true))
	wantNoPermission(t, err, "VirtualMachine.Provisioning.Customize", w.template.Reference())
	if _, err := clone(t, w, w.nodes, "node-3", cloneSpec(w, false)); err != nil {
		t.Errorf("a clone without customization needs no Customize: %v", err)
	}
}

// The property collector leaves out what the account may not read, with
// no error, as vCenter does; the administrator sees it.
func TestPropertyCollectorHidesUnreadable(t *testing.T) {
	s, ca := startEnforcing(t)
	ctx := t.Context()
	admin, err := connect(ctx, t, s, ca, url.UserPassword(s.User, s.Password))
	if err != nil {
		t.Fatal(err)
	}
	// The other datastore: No access for the provider's account.
	ds, err := find.NewFinder(admin, true).Datastore(ctx, "/DC0/datastore/DC0_POD0/LocalDS_1")
	if err != nil {
		t.Fatal(err)
	}
	am := object.NewAuthorizationManager(admin)
	roles, err := am.RoleList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ref := ds.Reference()
	if err := am.SetEntityPermissions(ctx, ref, []types.Permission{{Entity: &ref, Principal: testProvider, RoleId: roles.ByName("NoAccess").RoleId}}); err != nil {
		t.Fatal(err)
	}
	names := func(c *vim25.Client) []string {
		m := view.NewManager(c)
		v, err := m.CreateContainerView(ctx, c.ServiceContent.RootFolder, []string{"Datastore"}, true)
		if err != nil {
			t.Fatal(err)
		}
		var dss []mo.Datastore
		if err := v.Retrieve(ctx, []string{"Datastore"}, []string{"name"}, &dss); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range dss {
			out = append(out, d.Name)
		}
		slices.Sort(out)
		return out
	}
	provider, err := connect(ctx, t, s, ca, url.UserPassword(testProvider, testProviderPass))
	if err != nil {
		t.Fatal(err)
	}
	if got := names(provider); !slices.Equal(got, []string{"LocalDS_0"}) {
		t.Errorf("the provider's account reads datastores %v, want only LocalDS_0", got)
	}
	if got := names(admin); !slices.Contains(got, "LocalDS_1") {
		t.Errorf("the administrator reads datastores %v, want LocalDS_1 among them", got)
	}
	// By its reference: an empty answer, not an error.
	var one mo.Datastore
	if err := property.DefaultCollector(provider).RetrieveOne(ctx, ref, []string{"name"}, &one); err != nil || one.Name != "" {
		t.Errorf("reading the hidden datastore by reference: %q, %v; want nothing and no error", one.Name, err)
	}
}

package resources_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
)

// TestAccLeastPrivilege_missingPrivilege: the sandbox's vCenter checks the
// provider's user against its roles, so a golden image built in a folder
// where the user holds the documented role less one privilege
// (VirtualMachine.GuestOperations.Execute, which every step over the
// default vmtools transport needs) fails through the Terraform CLI with an
// error naming that privilege and the build VM it was checked on. The
// rest of the role still lets the provider clone the build VM there and
// destroy it after the failure (CheckDestroy).
func TestAccLeastPrivilege_missingPrivilege(t *testing.T) {
	acctest.RequireSandbox(t, "the sandbox's vCenter administrator, to grant a reduced role")
	acctest.PreCheck(t)
	folder := grantRoleWithout(t, "windows-golden-images", "VirtualMachine.GuestOperations.Execute")
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckTemplatesDestroyed(t),
		Steps: []resource.TestStep{{
			Config: acctest.GoldenImageConfig(acctest.Name("noexec"), map[string]string{"folder": fmt.Sprintf("%q", folder)}),
			ExpectError: acctest.Wrapped(`Permission to perform this operation was denied. \(StartProgramInGuest: the vCenter user lacks ` +
				`VirtualMachine\.GuestOperations\.Execute on VirtualMachine:vm-\d+;`),
		}},
	})
}

// grantRoleWithout makes, as vCenter's administrator, a VM folder where
// the provider's user (VSPHERE_USER) holds the guide's role named role less
// one privilege, propagated; it removes both when the test ends.
func grantRoleWithout(t *testing.T, role, privilege string) string {
	t.Helper()
	ctx := context.Background()
	c := acctest.VSphere(t).Client.Client
	am := object.NewAuthorizationManager(c)
	roles, err := am.RoleList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	base := roles.ByName(role)
	if base == nil || !slices.Contains(base.Privilege, privilege) {
		t.Fatalf("the sandbox's vCenter has no role %s holding %s", role, privilege)
	}
	name := acctest.Name("without")
	id, err := am.AddRole(ctx, name, slices.DeleteFunc(slices.Clone(base.Privilege), func(p string) bool { return p == privilege }))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := am.RoleList(ctx); got.ByName(name) != nil {
		id = got.ByName(name).RoleId // vcsim answers AddAuthorizationRole without the id
	}
	parentRef, err := acctest.VSphere(t).FindFolderByPath(ctx, "/DC0/vm", false)
	if err != nil {
		t.Fatal(err)
	}
	folder, err := object.NewFolder(c, parentRef).CreateFolder(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	ref := folder.Reference()
	if err := am.SetEntityPermissions(ctx, ref, []types.Permission{{Entity: &ref, Principal: os.Getenv("VSPHERE_USER"), RoleId: id, Propagate: true}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if task, err := folder.Destroy(ctx); err == nil {
			_ = task.Wait(ctx)
		}
		_ = am.RemoveRole(ctx, id, false)
	})
	return "/DC0/vm/" + name
}

package vsphere_test

import (
	"strings"
	"testing"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

// A NoPermission fault from vCenter names, in the error the user sees, the
// privilege that is missing, on which object, for which method, and what
// the least-privilege role grants for it; it stays a NoPermission fault.
// vcsim's own fault injection returns the fault as vCenter would (and as
// the sandbox's role enforcement, internal/sandbox/vcsim/authz.go, does for
// the provider's account).
func TestNoPermissionNamesThePrivilege(t *testing.T) {
	e := newEnv(t)
	spec := e.cloneSpec(t, "noperm", "")
	folder := types.ManagedObjectReference{Type: "Folder", Value: "group-v4"}
	for _, tc := range []struct {
		name  string
		fault *types.NoPermission
		want  []string
	}{
		{"vSphere 7 (privilegeId, object)", &types.NoPermission{Object: &folder, PrivilegeId: "VirtualMachine.Inventory.CreateFromExisting"},
			[]string{"CloneVM_Task", "lacks VirtualMachine.Inventory.CreateFromExisting on Folder:group-v4", "the provider's role needs", "least-privilege guide"}},
		{"vSphere 8 (missingPrivileges)", &types.NoPermission{MissingPrivileges: []types.NoPermissionEntityPrivileges{
			{Entity: folder, PrivilegeIds: []string{"VirtualMachine.Inventory.CreateFromExisting", "VirtualMachine.Config.Annotation"}}}},
			[]string{"lacks VirtualMachine.Inventory.CreateFromExisting, VirtualMachine.Config.Annotation on Folder:group-v4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := e.srv.Model.Service
			svc.ClearFaultRules()
			t.Cleanup(svc.ClearFaultRules)
			svc.AddFaultRule(&simulator.FaultInjectionRule{MethodName: "CloneVM_Task", ObjectType: "*", ObjectName: "*",
				Probability: 1, FaultType: simulator.FaultTypeCustom, Fault: tc.fault, Enabled: true})
			_, err := e.c.Clone(t.Context(), spec)
			if err == nil {
				t.Fatal("the clone succeeded under an injected NoPermission")
			}
			if !fault.Is(err, &types.NoPermission{}) {
				t.Errorf("the error is no longer a NoPermission fault: %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not say %q:\n%v", w, err)
				}
			}
		})
	}
}

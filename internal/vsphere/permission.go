package vsphere

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// permissionFaults is a round tripper that makes vCenter's NoPermission
// fault say what to do: which privilege is missing on which object, for
// which method, and what this provider documents that method needs
// (MethodPrivileges, the least-privilege guide). The fault's text is
// rewritten in place, so the error stays the SOAP fault it was (govmomi
// and this package recognise faults by type, not by wrapping).
type permissionFaults struct {
	soap.RoundTripper
}

func (p permissionFaults) RoundTrip(ctx context.Context, req, res soap.HasFault) error {
	err := p.RoundTripper.RoundTrip(ctx, req, res)
	if err != nil && soap.IsSoapFault(err) {
		f := soap.ToSoapFault(err)
		if np, ok := noPermission(f.Detail.Fault); ok {
			f.String = explainNoPermission(methodOf(req), np, f.String)
		}
	}
	return err
}

// noPermission is the fault when it is exactly NoPermission: NotAuthenticated
// embeds NoPermission too, and means an ended session (relogin), not a
// missing privilege.
func noPermission(f types.AnyType) (*types.NoPermission, bool) {
	switch v := f.(type) {
	case *types.NoPermission:
		return v, true
	case types.NoPermission:
		return &v, true
	}
	return nil, false
}

func methodOf(req soap.HasFault) string {
	t := reflect.TypeOf(req)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return strings.TrimSuffix(t.Name(), "Body")
}

// explainNoPermission is the fault's text with the missing privileges
// (vSphere 8 lists them per entity in missingPrivileges; earlier versions
// give one privilegeId and object) and what the role needs for the method.
func explainNoPermission(method string, np *types.NoPermission, text string) string {
	var missing []string
	for _, m := range np.MissingPrivileges {
		missing = append(missing, fmt.Sprintf("%s on %s", strings.Join(m.PrivilegeIds, ", "), m.Entity))
	}
	if len(missing) == 0 && np.PrivilegeId != "" {
		on := "the object of the call"
		if np.Object != nil {
			on = np.Object.String()
		}
		missing = append(missing, np.PrivilegeId+" on "+on)
	}
	var b strings.Builder
	if text == "" {
		text = "permission to perform this operation was denied"
	}
	b.WriteString(text)
	fmt.Fprintf(&b, " (%s", method)
	if len(missing) > 0 {
		fmt.Fprintf(&b, ": the vCenter user lacks %s", strings.Join(missing, "; "))
	}
	if doc, ok := MethodPrivileges[method]; ok {
		fmt.Fprintf(&b, "; the provider's role needs %s on %s for it", strings.Join(doc.Privileges, ", "), doc.On)
	}
	b.WriteString(". Add the privilege to the vCenter role the provider's user holds on that object, or on a parent with propagation: the least-privilege guide lists every privilege by method)")
	return b.String()
}

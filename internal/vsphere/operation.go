package vsphere

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"

	"github.com/vmware/govmomi/vim25/types"
)

// WithOperation tags ctx with one Terraform operation (action, such as
// "create" or "list") of resource (its type name, "windows_node"): every
// vSphere call made with it carries the SOAP header operationID
// "<resource>.<action>-<8 hex digits>", which vCenter writes beside the
// call in its logs (vpxd.log "opID="), so an administrator can find all
// that one operation did. govmomi sends the header for the types.ID
// context value. The id is returned for the provider's own log.
//
// The sandbox records the provider's calls by operationID, which is how
// MethodPrivileges' Resources are checked against what each resource calls
// (CheckResourcePrivileges).
func WithOperation(ctx context.Context, resource, action string) (context.Context, string) {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	id := resource + "." + action + "-" + hex.EncodeToString(b[:])
	return context.WithValue(ctx, types.ID{}, id), id
}

// OperationResource returns the resource label (as MethodPrivileges'
// Resources name it) of an operationID that WithOperation made: the type
// name, with " (list)" for a list operation; ok is false for any other id.
func OperationResource(operationID string) (label string, ok bool) {
	op, suffix, found := strings.Cut(operationID, "-")
	if !found || len(suffix) != 8 {
		return "", false
	}
	resource, action, found := strings.Cut(op, ".")
	if !found || !strings.HasPrefix(resource, "windows_") || action == "" {
		return "", false
	}
	if action == "list" {
		return resource + " (list)", true
	}
	return resource, true
}

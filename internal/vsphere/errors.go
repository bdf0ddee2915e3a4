package vsphere

import (
	"errors"
	"fmt"
	"strings"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/vim25/types"
)

// NotFoundError says an inventory object does not exist (any more). Read
// turns it into "remove from state"; Delete treats it as already done.
type NotFoundError struct {
	Kind string // "virtual machine", "folder", "resource pool", ...
	ID   string // what was looked for: a managed object id, path or UUID
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("%s %s not found", e.Kind, e.ID)
}

// IsNotFound reports whether err (or an error it wraps) is a *NotFoundError
// or a vSphere ManagedObjectNotFound fault.
func IsNotFound(err error) bool {
	var nf *NotFoundError
	if errors.As(err, &nf) {
		return true
	}
	_, ok := managedObjectNotFound(err)
	return ok
}

// managedObjectNotFound extracts the missing object of a ManagedObjectNotFound
// fault anywhere in err (SOAP fault, task error, wrapped).
func managedObjectNotFound(err error) (types.ManagedObjectReference, bool) {
	if err == nil {
		return types.ManagedObjectReference{}, false
	}
	var f *types.ManagedObjectNotFound
	if _, ok := fault.As(err, &f); ok && f != nil {
		return f.Obj, true
	}
	return types.ManagedObjectReference{}, false
}

// isFault reports whether err carries a fault of target's type.
func isFault(err error, target types.BaseMethodFault) bool {
	return err != nil && fault.Is(err, target)
}

// notFoundOr turns a ManagedObjectNotFound fault about ref into a
// *NotFoundError and wraps anything else with what was being done.
func notFoundOr(err error, kind string, ref types.ManagedObjectReference, doing string) error {
	if err == nil {
		return nil
	}
	if _, ok := managedObjectNotFound(err); ok {
		return &NotFoundError{Kind: kind, ID: ref.Value}
	}
	return fmt.Errorf("%s %s %s: %w", doing, kind, ref.Value, err)
}

// PowerCycleRequiredError says a hardware change cannot be applied while the
// VM runs (CPU or memory hot-add is off, or the change removes capacity).
type PowerCycleRequiredError struct {
	VM     string
	Reason string
}

func (e *PowerCycleRequiredError) Error() string {
	return fmt.Sprintf("virtual machine %s must be powered off for this change: %s", e.VM, e.Reason)
}

// asFault is fault.As for a typed pointer target.
func asFault[T types.BaseMethodFault](err error, target *T) bool {
	if err == nil {
		return false
	}
	_, ok := fault.As(err, target)
	return ok
}

// faultName names a fault's type ("InvalidPowerState").
func faultName(f types.BaseMethodFault) string {
	return strings.TrimPrefix(fmt.Sprintf("%T", f), "*types.")
}

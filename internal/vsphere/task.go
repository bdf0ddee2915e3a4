package vsphere

import (
	"context"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/task"
	"github.com/vmware/govmomi/vim25/types"
)

// waitTask waits for a task started by call (err is the call's error) on
// the shared watch and returns its result; also join the view with it (see
// watcher.wait). A queued task (vCenter's queue for a host's provisioning
// units or its concurrent operations) is waited for like a running one:
// only success or error ends the wait. Every progressInterval of it is
// logged (watcher.wait): the task, its method and object, its state and
// progress. A failed task's error is a
// task.Error carrying its fault, as govmomi's Task.WaitForResult returns it,
// so fault checks (IsNotFound, isInvalidPowerState) see through it.
func (c *Client) waitTask(ctx context.Context, t *object.Task, err error, also ...types.ManagedObjectReference) (types.AnyType, error) {
	if err != nil {
		return nil, err
	}
	var (
		result types.AnyType
		failed error
	)
	err = c.watcher().wait(ctx, t.Reference(), func(p props) (bool, error) {
		switch taskState(p["info.state"]) {
		case types.TaskInfoStateSuccess:
			result = p["info.result"]
			return true, nil
		case types.TaskInfoStateError:
			failed = taskError(p["info.error"])
			return true, nil
		}
		return false, nil
	}, also...)
	if err != nil {
		return nil, err
	}
	return result, failed
}

func taskState(v types.AnyType) types.TaskInfoState {
	switch s := v.(type) {
	case types.TaskInfoState:
		return s
	case string:
		return types.TaskInfoState(s)
	}
	return ""
}

func taskError(v types.AnyType) error {
	var f *types.LocalizedMethodFault
	switch e := v.(type) {
	case types.LocalizedMethodFault:
		f = &e
	case *types.LocalizedMethodFault:
		f = e
	}
	if f == nil || f.Fault == nil {
		f = &types.LocalizedMethodFault{Fault: &types.SystemError{}, LocalizedMessage: "the task failed without saying why"}
	}
	if f.LocalizedMessage == "" {
		// vCenter always localizes; keep the fault's type readable otherwise.
		f.LocalizedMessage = faultName(f.Fault)
	}
	return task.Error{LocalizedMethodFault: f}
}

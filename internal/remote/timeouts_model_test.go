package remote

import (
	"errors"
	"testing"

	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/latency"
)

// TestPacingAgainstTheModel: a reconnect outlasts the longest restart of
// the model's tail (the one completing a cumulative update), and no two
// polls of a guest process come closer than VMware Tools tolerates at the
// tail (vix error 3016 below it: govmomi#759).
func TestPacingAgainstTheModel(t *testing.T) {
	m := latency.New(1, latency.Tail)
	for _, op := range []latency.Op{latency.WindowsRestart, latency.UpdateRestart, latency.WindowsBoot} {
		if DefaultConnectTimeout <= m.Real(op) {
			t.Errorf("DefaultConnectTimeout %s, not above %s's tail %s", DefaultConnectTimeout, op, m.Real(op))
		}
	}
	if tail := m.Real(latency.ProcessPollInterval); processPollInterval <= tail {
		t.Errorf("processPollInterval %s, not above VMware Tools' tail interval %s", processPollInterval, tail)
	}
}

// TestToolsBusy tells vCenter's 3016 SystemError from other faults: the
// fault with its reason, and its message as govc prints it
// (vmware/govmomi#759).
func TestToolsBusy(t *testing.T) {
	busy := systemError("A general system error occurred: vix error codes = (3016, 0).", "vix error codes = (3016, 0).\n")
	if !toolsBusy(busy) {
		t.Errorf("toolsBusy(%v) = false", busy)
	}
	if toolsBusy(errors.New("ServerFaultCode: A general system error occurred: vix error codes = (3016, 0).")) == false {
		t.Error("the message alone (a fault without its detail) is 3016 too")
	}
	for _, err := range []error{
		systemError("A general system error occurred: vix error codes = (35, 0).", "vix error codes = (35, 0).\n"),
		errors.New("ServerFaultCode: GuestOperationsUnavailable"),
	} {
		if toolsBusy(err) {
			t.Errorf("toolsBusy(%v) = true", err)
		}
	}
}

// systemError is vCenter's SystemError fault as govmomi's client returns it.
func systemError(msg, reason string) error {
	f := &soap.Fault{Code: "ServerFaultCode", String: msg}
	f.Detail.Fault = &types.SystemError{Reason: reason}
	return soap.WrapSoapFault(f)
}

package vsphere

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/vmware/govmomi/event"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// WaitForIP waits, on the shared watch, until the guest reports an address
// filter accepts (see IPFilter: APIPA, link-local and HNS vEthernet adapters
// never count) and returns it. It fails at once when the VM is or becomes
// powered off, since no address will come then.
func (c *Client) WaitForIP(ctx context.Context, vm mo.Reference, filter IPFilter) (string, error) {
	ref := vm.Reference()
	var (
		nics    []GuestNIC
		primary string
		power   types.VirtualMachinePowerState
		ip      string
	)
	err := c.watcher().wait(ctx, ref, func(p props) (bool, error) {
		nics, primary, power = guestNICsOf(p["guest.net"]), stringOf(p["guest.ipAddress"]), powerState(p)
		ip = filter.pick(nics, primary)
		return ip != "" || power == PoweredOff, nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("waiting for the guest IP of virtual machine %s: none reported yet (%s); check that VMware Tools runs in the guest and the network gives it an address: %w",
				ref.Value, describeAddresses(nics, primary), ctx.Err())
		}
		return "", notFoundOr(err, "virtual machine", ref, "waiting for the guest IP of")
	}
	if ip == "" {
		return "", fmt.Errorf("virtual machine %s is powered off; it will not report a guest IP", ref.Value)
	}
	return ip, nil
}

func describeAddresses(nics []GuestNIC, primary string) string {
	var all []string
	for _, n := range nics {
		all = append(all, n.IPAddresses...)
	}
	if len(all) == 0 && primary != "" {
		all = append(all, primary)
	}
	if len(all) == 0 {
		return "no addresses"
	}
	return "only " + strings.Join(all, ", ")
}

// customizationEvents are the event types that end a guest customization.
var customizationEvents = []string{
	"CustomizationSucceeded", "CustomizationFailed", "CustomizationSysprepFailed",
	"CustomizationNetworkSetupFailed", "CustomizationUnknownFailure", "CustomizationLinuxIdentityFailed",
}

// ErrCustomizationFailed is wrapped by WaitForCustomization's error when the
// guest reported a failed customization.
var ErrCustomizationFailed = errors.New("guest customization failed")

// WaitForCustomization waits until the VM's guest customization ends and
// reports how: nil when it succeeded, an error wrapping
// ErrCustomizationFailed when it failed. It watches the VM's
// guest.customizationInfo on the shared watch (vSphere 7.0U2 and later: the
// status is PENDING from the clone on, so calling it after PowerOn misses
// nothing); an older vCenter, which lacks that property, has its
// customization events watched instead.
func (c *Client) WaitForCustomization(ctx context.Context, vm mo.Reference) error {
	ref := vm.Reference()
	w := c.watcher()
	s, err := w.session(ctx)
	if err != nil {
		return err
	}
	if !s.customizationInfo {
		return c.waitForCustomizationEvents(ctx, ref)
	}
	var status, msg string
	err = w.wait(ctx, ref, func(p props) (bool, error) {
		info := customizationInfoOf(p[propCustomizationInfo])
		if info == nil {
			return false, nil
		}
		status, msg = info.CustomizationStatus, info.ErrorMsg
		switch types.GuestInfoCustomizationStatus(status) {
		case types.GuestInfoCustomizationStatusTOOLSDEPLOYPKG_SUCCEEDED:
			return true, nil
		case types.GuestInfoCustomizationStatusTOOLSDEPLOYPKG_FAILED:
			if msg == "" {
				msg = "no reason given"
			}
			return true, fmt.Errorf("%w on virtual machine %s: %s; the guest's customization log (C:\\Windows\\Temp\\vmware-imc\\guestcust.log) says why",
				ErrCustomizationFailed, ref.Value, strings.TrimSpace(msg))
		}
		return false, nil
	})
	if err != nil {
		switch {
		case errors.Is(err, ErrCustomizationFailed):
			return err
		case ctx.Err() != nil:
			return fmt.Errorf("waiting for the guest customization of virtual machine %s (status %s): %w", ref.Value, orUnknown(status), ctx.Err())
		}
		return notFoundOr(err, "virtual machine", ref, "waiting for the guest customization of")
	}
	return nil
}

// waitForCustomizationEvents waits for the end of a customization as a
// vCenter older than 7.0U2 tells it: by the VM's events, through an event
// history collector (its latest page includes events posted before the watch
// began) and a property collector of its own.
func (c *Client) waitForCustomizationEvents(ctx context.Context, ref types.ManagedObjectReference) error {
	mgr := event.NewManager(c.Client.Client)
	hc, err := mgr.CreateCollectorForEvents(ctx, types.EventFilterSpec{
		Entity:      &types.EventFilterSpecByEntity{Entity: ref, Recursion: types.EventFilterSpecRecursionOptionSelf},
		EventTypeId: customizationEvents,
	})
	if err != nil {
		return notFoundOr(err, "virtual machine", ref, "watching the customization events of")
	}
	defer func() { _ = hc.Destroy(context.WithoutCancel(ctx)) }()

	var result error
	done := false
	err = property.Wait(ctx, property.DefaultCollector(c.Client.Client), hc.Reference(), []string{"latestPage"},
		func(changes []types.PropertyChange) bool {
			for _, ch := range changes {
				page, ok := ch.Val.(types.ArrayOfEvent)
				if !ok {
					continue
				}
				for _, e := range page.Event {
					switch ev := e.(type) {
					case *types.CustomizationSucceeded:
						done, result = true, nil
					case types.BaseCustomizationFailed:
						f := ev.GetCustomizationFailed()
						msg := f.FullFormattedMessage
						if f.Reason != "" {
							msg += " (" + f.Reason + ")"
						}
						done, result = true, fmt.Errorf("%w on virtual machine %s: %s; the guest's customization log (C:\\Windows\\Temp\\vmware-imc\\guestcust.log) says why",
							ErrCustomizationFailed, ref.Value, strings.TrimSpace(msg))
					}
				}
			}
			return done
		})
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("waiting for the guest customization of virtual machine %s: %w", ref.Value, ctx.Err())
		}
		return fmt.Errorf("waiting for the guest customization of virtual machine %s: %w", ref.Value, err)
	}
	return result
}

// WaitForGuestRestart waits until VMware Tools in the guest stops and runs
// again, which is how vCenter sees a guest reboot (Restart-Computer, a
// feature install's reboot). Call it right after triggering the restart: a
// guest that has already come back before the wait began is not noticed. A
// VM that powers off meanwhile ends the wait with an error.
func (c *Client) WaitForGuestRestart(ctx context.Context, vm mo.Reference) error {
	ref := vm.Reference()
	var (
		seenDown bool
		power    types.VirtualMachinePowerState
	)
	running := string(types.VirtualMachineToolsRunningStatusGuestToolsRunning)
	err := c.watcher().wait(ctx, ref, func(p props) (bool, error) {
		tools := stringOf(p["guest.toolsRunningStatus"])
		power = powerState(p)
		if tools != running {
			seenDown = true
		}
		return power == PoweredOff || (seenDown && tools == running), nil
	})
	if err != nil {
		if ctx.Err() != nil {
			state := "VMware Tools never stopped"
			if seenDown {
				state = "VMware Tools stopped but has not run again"
			}
			return fmt.Errorf("waiting for the guest of virtual machine %s to restart (%s): %w", ref.Value, state, ctx.Err())
		}
		return notFoundOr(err, "virtual machine", ref, "waiting for the guest restart of")
	}
	if power == PoweredOff {
		return fmt.Errorf("virtual machine %s powered off while its guest was restarting", ref.Value)
	}
	return nil
}

// WaitForToolsRunning waits until VMware Tools runs in the guest (the guest
// has booted far enough to report itself).
func (c *Client) WaitForToolsRunning(ctx context.Context, vm mo.Reference) error {
	ref := vm.Reference()
	err := c.watcher().wait(ctx, ref, func(p props) (bool, error) {
		return stringOf(p["guest.toolsRunningStatus"]) == string(types.VirtualMachineToolsRunningStatusGuestToolsRunning), nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("waiting for VMware Tools in virtual machine %s: %w", ref.Value, ctx.Err())
		}
		return notFoundOr(err, "virtual machine", ref, "waiting for VMware Tools in")
	}
	return nil
}

// WaitForGuestOperations waits, on the shared watch, until the VM's guest
// takes guest operations (guest.guestOperationsReady: VMware Tools runs and
// has started its guest operations service), the readiness the vmtools
// transport (internal/remote) waits on before its first call and after a
// restart. A VM that is or becomes powered off ends the wait with an error:
// no guest operation will run then.
func (c *Client) WaitForGuestOperations(ctx context.Context, vm mo.Reference) error {
	ref := vm.Reference()
	var (
		power types.VirtualMachinePowerState
		tools string
	)
	err := c.watcher().wait(ctx, ref, func(p props) (bool, error) {
		power, tools = powerState(p), stringOf(p["guest.toolsRunningStatus"])
		ready, known := boolOf(p["guest.guestOperationsReady"])
		if !known {
			// A vCenter that does not report it: VMware Tools running is
			// the nearest sign.
			ready = tools == string(types.VirtualMachineToolsRunningStatusGuestToolsRunning)
		}
		return ready || power == PoweredOff, nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("waiting for guest operations in virtual machine %s (VMware Tools %s): check that VMware Tools runs in the guest: %w",
				ref.Value, orUnknown(tools), ctx.Err())
		}
		return notFoundOr(err, "virtual machine", ref, "waiting for guest operations in")
	}
	if power == PoweredOff {
		return fmt.Errorf("virtual machine %s is powered off; guest operations need it running with VMware Tools", ref.Value)
	}
	return nil
}

// Decoders of watched property values: vCenter sends an enum as its type, a
// simulator in the same process may send the Go value it holds.

func powerState(p props) types.VirtualMachinePowerState {
	switch v := p["runtime.powerState"].(type) {
	case types.VirtualMachinePowerState:
		return v
	case string:
		return types.VirtualMachinePowerState(v)
	}
	return ""
}

func stringOf(v types.AnyType) string {
	switch s := v.(type) {
	case string:
		return s
	case types.VirtualMachineToolsRunningStatus:
		return string(s)
	}
	return ""
}

func boolOf(v types.AnyType) (value, ok bool) {
	switch b := v.(type) {
	case bool:
		return b, true
	case *bool:
		if b != nil {
			return *b, true
		}
	}
	return false, false
}

func guestNICsOf(v types.AnyType) []GuestNIC {
	switch n := v.(type) {
	case types.ArrayOfGuestNicInfo:
		return guestNICs(n.GuestNicInfo)
	case []types.GuestNicInfo:
		return guestNICs(n)
	}
	return nil
}

func customizationInfoOf(v types.AnyType) *types.GuestInfoCustomizationInfo {
	switch i := v.(type) {
	case types.GuestInfoCustomizationInfo:
		return &i
	case *types.GuestInfoCustomizationInfo:
		return i
	}
	return nil
}

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

// WaitForIP waits, with its own property collector, until the guest reports
// an address filter accepts (see IPFilter: APIPA, link-local and HNS
// vEthernet adapters never count) and returns it. It fails at once when the
// VM is or becomes powered off, since no address will come then.
func (c *Client) WaitForIP(ctx context.Context, vm mo.Reference, filter IPFilter) (string, error) {
	ref := vm.Reference()
	var (
		nics    []GuestNIC
		primary string
		power   types.VirtualMachinePowerState
		ip      string
	)
	err := property.Wait(ctx, property.DefaultCollector(c.Client.Client), ref,
		[]string{"guest.net", "guest.ipAddress", "runtime.powerState"},
		func(changes []types.PropertyChange) bool {
			for _, ch := range changes {
				switch ch.Name {
				case "guest.net":
					nics = nil
					if v, ok := ch.Val.(types.ArrayOfGuestNicInfo); ok {
						nics = guestNICs(v.GuestNicInfo)
					}
				case "guest.ipAddress":
					primary, _ = ch.Val.(string)
				case "runtime.powerState":
					power, _ = ch.Val.(types.VirtualMachinePowerState)
				}
			}
			ip = filter.pick(nics, primary)
			return ip != "" || power == PoweredOff
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
// reports how: nil for CustomizationSucceeded, an error wrapping
// ErrCustomizationFailed for a Customization*Failed event. It watches the
// VM's events through an event history collector (its latest page includes
// events posted before the watch began, so calling it after PowerOn misses
// nothing) and a property collector of its own.
func (c *Client) WaitForCustomization(ctx context.Context, vm mo.Reference) error {
	ref := vm.Reference()
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
		tools    string
		power    types.VirtualMachinePowerState
	)
	err := property.Wait(ctx, property.DefaultCollector(c.Client.Client), ref,
		[]string{"guest.toolsRunningStatus", "runtime.powerState"},
		func(changes []types.PropertyChange) bool {
			for _, ch := range changes {
				switch ch.Name {
				case "guest.toolsRunningStatus":
					tools, _ = ch.Val.(string)
				case "runtime.powerState":
					power, _ = ch.Val.(types.VirtualMachinePowerState)
				}
			}
			if tools != string(types.VirtualMachineToolsRunningStatusGuestToolsRunning) {
				seenDown = true
			}
			return power == PoweredOff || (seenDown && tools == string(types.VirtualMachineToolsRunningStatusGuestToolsRunning))
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
	err := property.Wait(ctx, property.DefaultCollector(c.Client.Client), ref, []string{"guest.toolsRunningStatus"},
		func(changes []types.PropertyChange) bool {
			for _, ch := range changes {
				if s, _ := ch.Val.(string); s == string(types.VirtualMachineToolsRunningStatusGuestToolsRunning) {
					return true
				}
			}
			return false
		})
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("waiting for VMware Tools in virtual machine %s: %w", ref.Value, ctx.Err())
		}
		return notFoundOr(err, "virtual machine", ref, "waiting for VMware Tools in")
	}
	return nil
}

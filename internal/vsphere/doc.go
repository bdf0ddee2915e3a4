// Package vsphere holds what the provider asks of vCenter through govmomi:
// the session, finders, clone with Windows sysprep customization, power,
// reconfigure, destroy, templates and linked clones, batch reads and
// property-collector waits.
//
// It never imports the plugin framework; helpers take plain request structs
// (CloneSpec, Sysprep, Hardware, IPFilter) and a context whose deadline comes
// from the resource's timeouts. Operations are methods of *Client, named by
// verb and grouped per object (find.go, clone.go, power.go, guest.go,
// hardware.go, lifecycle.go, vm.go). A VM is passed as anything with a
// managed object reference: a *VM, a types.ManagedObjectReference, or
// VMRef("vm-42") built from the id saved in state.
//
// # Not found
//
// A missing object is a *NotFoundError (IsNotFound also recognises a raw
// ManagedObjectNotFound fault): Read turns it into "remove from state",
// Destroy treats it as done.
//
// # Waits and concurrency
//
// Every wait (task results, WaitForIP, WaitForPowerState,
// WaitForCustomization, WaitForGuestRestart) goes through one property
// collector per Client (watch.go): a filter over a ListView that waits put
// their objects into, and one WaitForUpdatesEx loop that hands each waiter
// its object's properties. Concurrent waits share the long poll and the
// view's changes; one collector's updates go to its one loop, so no waiter
// loses another's. A cancelled wait takes its object out of the view.
// Nothing polls or sleeps. WaitForCustomization reads
// guest.customizationInfo (vSphere 7.0U2); an older vCenter has its
// customization events watched instead. Close removes the collector.
//
// Clone placements (template, folder, pool, datastore, network, host) are
// looked up once per Client and remembered (Lookups), the template's
// devices too; a clone that finds one gone is retried with fresh lookups.
//
// # Partial create
//
// Clone returns the VM's identity (managed object id, instance and BIOS
// UUIDs, inventory path) as soon as the clone task completes; the caller
// saves it, then calls PowerOn, WaitForCustomization and WaitForIP, so a later
// failure leaves a VM the state knows about. If reading the identity fails
// after the clone succeeded, Clone still returns the VM with its reference
// (and an error).
//
// # Linked clones
//
// CloneSpec.LinkedClone clones from the source's current snapshot with child
// disks. Clone never modifies the source: a template cannot take snapshots,
// so a source without one is an error that says how to make one.
// windows_golden_image takes a snapshot of its build VM (CreateSnapshot)
// before MarkAsTemplate, so its templates support linked clones. LinkedClones
// lists the VMs whose disks have a parent in the template's disk chain:
// deleting such a template is refused.
//
// # Round trips (measured on vcsim with a counting soap.RoundTripper)
//
//	ReadVM / ReadVMs(n VMs)  1 RetrievePropertiesEx (+1 per VM that vanished)
//	Clone                    4 (+1 with Network, once per run): read source
//	                         (once per run for a template), CloneVM_Task,
//	                         the task on the shared watch (ModifyListView and
//	                         its share of the long poll), identity and path (1)
//	PowerOn                  3 (call, ModifyListView with the VM, long poll)
//	WaitForCustomization     0 after PowerOn (the VM is in the view already)
//	WaitForIP                0 after WaitForCustomization
//	Destroy                  1 when gone; 7 when powered on (read, power-off, destroy)
//	LinkedClones             4 however many VMs (container view)
//
// The shared watch costs 3 calls once per run (collector, view, filter). A
// node's vSphere create (Clone, PowerOn, WaitForCustomization, WaitForIP) is
// 7 round trips alone and about 6 when nodes are created side by side
// (their view changes and long polls are shared); its refresh 1.
// TestRoundTrips and TestSharedWatchConcurrentCreates keep these in check.
package vsphere

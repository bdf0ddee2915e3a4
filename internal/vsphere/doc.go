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
// WaitForCustomization) uses a property collector of its own, created and
// destroyed per wait, never the session's default collector: vCenter (and
// vcsim) deliver one collector's updates to one waiter, so shared waits lose
// completions under parallelism. Nothing polls or sleeps.
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
//	Clone                    10 (+1 with Network): read source, CloneVM_Task,
//	                         task wait on its own collector (6), identity (2)
//	PowerOn                   6 (call + task wait)
//	WaitForCustomization      6 (event collector + its own property collector)
//	WaitForIP                 4
//	Destroy                   1 when gone; 14 when powered on (read, power-off, destroy)
//	LinkedClones              4 however many VMs (container view)
//
// A node's vSphere create (Clone, PowerOn, WaitForCustomization, WaitForIP)
// is 26 round trips; its refresh 1. TestRoundTrips keeps these in check.
package vsphere

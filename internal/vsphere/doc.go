// Package vsphere holds what the provider asks of vCenter through govmomi:
// the session, and (as resources need them) finders, clone and customization,
// power, reconfigure, destroy, and property-collector waits.
//
// It never imports the plugin framework; helpers take plain request structs
// and a context whose deadline comes from the resource's timeouts.
package vsphere

package winnode

// Creating a node: the clone of its golden image, customized by sysprep
// with its own Administrator password, then the join (join.go).

import (
	"context"
	"strings"

	"github.com/wincluster/terraform-provider-windows/internal/adminpass"
	"github.com/wincluster/terraform-provider-windows/internal/guest"
	"github.com/wincluster/terraform-provider-windows/internal/timezone"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// Create clones, customizes, bootstraps and joins a node. onVM is called as
// soon as the VM exists, before anything else can fail, so the caller saves
// it: from then on a failure leaves a tracked VM, never an untracked one.
// The clone carries the node's name and template (cloneMarks) from its
// first moment, so that a create that died before its caller saved the VM
// (the process killed between the clone and the state write) leaves a VM
// the next create finds and adopts, instead of cloning a second one.
func (m *Manager) Create(ctx context.Context, spec Spec, onVM func(Identity)) (Result, error) {
	ctx, stopProgress := m.keepProgress(ctx)
	defer stopProgress()
	var res Result
	req := cloneRequest(spec)
	id, adopted, err := m.adopt(ctx, spec, req)
	switch {
	case err != nil && id.VMID == "":
		return res, guest.Stage("checking the node's VM name", err)
	case adopted:
		m.progress(ctx, "adopt earlier clone", map[string]any{"vm": id.VMID})
	default:
		m.progress(ctx, "clone", map[string]any{"template": spec.Template})
		id, err = m.VSphere.CloneNode(ctx, req)
		if err != nil && id.VMID == "" {
			return res, guest.Stage("cloning "+spec.Template, err)
		}
	}
	res.Identity = id
	if onVM != nil {
		onVM(res.Identity)
	}
	if err != nil {
		// The VM exists but its identity is incomplete: tracked, then failed.
		return res, guest.Stage("cloning "+spec.Template, err)
	}
	if adopted {
		// It may be on already (its create died later than the clone):
		// its customization has then ended or goes on, and the wait below
		// reads which.
		if _, err := m.PowerOnIfOff(ctx, id.VMID); err != nil {
			return res, err
		}
	} else {
		m.progress(ctx, "power on", map[string]any{"vm": id.VMID})
		if err := m.VSphere.PowerOn(ctx, id.VMID); err != nil {
			return res, guest.Stage("powering on", err)
		}
	}
	m.progress(ctx, "customize", map[string]any{"vm": id.VMID})
	if err := m.VSphere.WaitForCustomization(ctx, id.VMID); err != nil {
		return res, guest.Stage("guest customization", err)
	}
	joined, err := m.Join(ctx, spec, res.Identity)
	joined.Identity = res.Identity
	return joined, err
}

// cloneRequest is the VM of a node: its Windows computer name is the node
// name in upper case.
// GuestPassword is the node's own Administrator password, derived from
// AdminPassword and the node's name (adminpass.ForNode): the customization
// sets it and every connection to the node uses it, so no two nodes share
// one and nothing is stored.
func (s Spec) GuestPassword() string {
	return adminpass.ForNode(s.AdminPassword, s.Name, s.AdminUser)
}

func cloneRequest(spec Spec) CloneRequest {
	return CloneRequest{
		Template: spec.Template, Name: spec.Name, Folder: spec.Folder,
		ResourcePoolID: spec.ResourcePoolID, DatastoreID: spec.DatastoreID, NetworkID: spec.NetworkID, HostID: spec.HostID,
		NumCPUs: spec.NumCPUs, MemoryMB: spec.MemoryMB, DiskSizeGB: spec.DiskSizeGB, LinkedClone: spec.LinkedClone,
		Annotation:  NodeAnnotation(spec.Name, spec.Site.Annotation),
		Site:        spec.Site,
		ExtraConfig: cloneMarks(spec),
		Sysprep:     vsphere.Sysprep{ComputerName: strings.ToUpper(spec.Name), AdminPassword: spec.GuestPassword(), TimeZone: sysprepIndex(spec.TimeZone), IPv4: spec.IPv4, Domain: spec.Domain},
	}
}

// sysprepIndex is what the customization can say of a time zone: the vSphere
// API takes sysprep's legacy index (CustomizationGuiUnattended.TimeZone), which
// Microsoft's table has for the zones of its day only; for the others (UTC
// among them) UTC+0 without daylight saving. The join's time-zone step then
// sets the zone by its ID, whatever the customization left.
func sysprepIndex(id string) int32 {
	if i, ok := timezone.Index(id); ok {
		return i
	}
	return timezone.UTCIndex
}

package winnode

// What a datacenter's vSphere adds to a node's VM (internal/vsphere's
// storage.go and metadata.go): where Storage DRS places it, its storage
// policy, its extra disks and NICs, which only a new VM can take, and its
// tags, custom attributes and notes, which change in place.

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/wincluster/terraform-provider-windows/internal/guest"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// SiteVM is a node VM's datacenter settings.
type SiteVM struct {
	// Create-only: a change replaces the node (a pool rolls new members in).
	DatastoreClusterID string
	StoragePolicyID    string
	ExtraDiskSizesGB   []int64
	ExtraNetworkIDs    []string

	// In place.
	// Annotation is the VM's notes; nil is the provider's own note, and
	// a pointer to "" no notes (what a refresh reads when they were
	// cleared outside Terraform).
	Annotation *string
	Metadata   vsphere.Metadata
}

// SiteChange is an in-place change of a node's SiteVM: what the state
// recorded (Had) and what the plan wants.
type SiteChange struct {
	Had, Want SiteVM
}

// changed reports whether the in-place settings differ.
func (c SiteChange) changed() bool {
	return !equalPtr(c.Had.Annotation, c.Want.Annotation) || !sameSet(c.Had.Metadata.Tags, c.Want.Metadata.Tags) ||
		!maps.Equal(c.Had.Metadata.CustomAttributes, c.Want.Metadata.CustomAttributes)
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

func equalPtr(a, b *string) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// NodeAnnotation is the VM's notes: the user's, else the provider's own.
func NodeAnnotation(name string, annotation *string) string {
	if annotation != nil {
		return *annotation
	}
	return "Kubernetes Windows node " + name + " (terraform-provider-windows)"
}

// ReadTags lists the tags attached to the node's VM, for a refresh that
// reads them back (vSphere's tagging API: the provider's account needs
// read access to the VM, as for the rest of the refresh).
func (m *Manager) ReadTags(ctx context.Context, vmID string) ([]string, error) {
	tags, err := m.VSphere.AttachedTags(ctx, vmID)
	if err != nil {
		return nil, fmt.Errorf("reading the tags of VM %s: %w", vmID, err)
	}
	return tags, nil
}

// applySite makes the VM's in-place settings those of the change.
func (m *Manager) applySite(ctx context.Context, name, vmID string, c SiteChange) error {
	if !c.changed() {
		return nil
	}
	m.progress(ctx, "vSphere tags, custom attributes and notes", map[string]any{"vm": vmID})
	if !equalPtr(c.Had.Annotation, c.Want.Annotation) {
		if err := m.VSphere.SetAnnotation(ctx, vmID, NodeAnnotation(name, c.Want.Annotation)); err != nil {
			return guest.Stage("setting the VM's annotation", err)
		}
	}
	if err := m.VSphere.SetMetadata(ctx, vmID, c.Had.Metadata, c.Want.Metadata); err != nil {
		return guest.Stage("setting the VM's tags and custom attributes", err)
	}
	return nil
}

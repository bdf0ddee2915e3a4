package vsphere

// What a site's automation keys on, set on a VM after its clone and changed
// in place later, as hashicorp/vsphere's vsphere_virtual_machine does with
// its tags (vSphere tag ids attached through the tagging API,
// vsphere/tags_helper.go), custom_attributes (custom field key → value,
// CustomFieldsManager.SetField, vsphere/internal/helper/customattribute)
// and annotation (the VM's notes, config.annotation).

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vapi/rest"
	"github.com/vmware/govmomi/vapi/tags"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// TagIDPattern is the form of a vSphere tag id as the tagging API hands it
// out (vsphere_tag.id, data.vsphere_tag.<name>.id):
// urn:vmomi:InventoryServiceTag:<uuid>:GLOBAL.
var TagIDPattern = regexp.MustCompile(`^urn:vmomi:InventoryServiceTag:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}:GLOBAL$`)

// CustomAttributeKeyPattern is a custom attribute's id, its custom field
// key (vsphere_custom_attribute.id): a decimal integer, 0 or more (vcsim
// numbers them from 0).
var CustomAttributeKeyPattern = regexp.MustCompile(`^(0|[1-9][0-9]{0,8})$`)

// Metadata is what a VM carries for the site's automation.
type Metadata struct {
	// Tags are vSphere tag ids.
	Tags []string
	// CustomAttributes maps a custom attribute's key (its id) to its value.
	CustomAttributes map[string]string
}

// SetMetadata makes the VM's tags and custom attributes those of want,
// given those of had (what this provider set before; nil at create): tags
// in had and not in want are detached, custom attributes in had and not in
// want cleared (set to "", as hashicorp/vsphere does), the rest attached
// or set. Tags and attributes others put on the VM are left alone.
func (c *Client) SetMetadata(ctx context.Context, vm mo.Reference, had, want Metadata) error {
	ref := vm.Reference()
	var errs []error
	set := map[string]string{}
	for k := range had.CustomAttributes {
		if _, ok := want.CustomAttributes[k]; !ok {
			set[k] = ""
		}
	}
	for k, v := range want.CustomAttributes {
		if old, ok := had.CustomAttributes[k]; !ok || old != v {
			set[k] = v
		}
	}
	if len(set) > 0 {
		m := object.NewCustomFieldsManager(c.Client.Client)
		for _, k := range slices.Sorted(maps.Keys(set)) {
			key, err := strconv.ParseInt(k, 10, 32)
			if err != nil {
				errs = append(errs, fmt.Errorf("custom attribute key %q is not a custom attribute id (a number)", k))
				continue
			}
			if err := m.Set(ctx, ref, int32(key), set[k]); err != nil {
				errs = append(errs, fmt.Errorf("setting custom attribute %s on %s: %w", k, ref.Value, err))
			}
		}
	}
	attach, detach := diffSets(had.Tags, want.Tags)
	if len(attach)+len(detach) > 0 {
		tm, err := c.tagManager(ctx)
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		for _, id := range detach {
			if err := tm.DetachTag(ctx, id, ref); err != nil {
				errs = append(errs, fmt.Errorf("detaching tag %s from %s: %w%s", id, ref.Value, err, taggingHint(err)))
			}
		}
		for _, id := range attach {
			if err := tm.AttachTag(ctx, id, ref); err != nil {
				errs = append(errs, fmt.Errorf("attaching tag %s to %s: %w%s", id, ref.Value, err, taggingHint(err)))
			}
		}
	}
	return errors.Join(errs...)
}

// taggingHint names the privileges a refused tagging call needs: the REST
// API's 403 reaches govmomi's client as its status alone.
func taggingHint(err error) string {
	if rest.IsStatusError(err, http.StatusForbidden) {
		return " (a tag is attached or detached with InventoryService.Tagging.AttachTag and InventoryService.Tagging.ObjectAttachable on the VM: the least-privilege guide's windows-nodes role)"
	}
	return ""
}

// SetAnnotation sets the VM's notes (ReconfigVM_Task with only the
// annotation: VirtualMachine.Config.Annotation).
func (c *Client) SetAnnotation(ctx context.Context, vm mo.Reference, text string) error {
	ref := vm.Reference()
	spec := types.VirtualMachineConfigSpec{Annotation: text}
	if text == "" {
		// An empty annotation is no change in a config spec; a space
		// clears the notes as the vSphere Client does (it trims it).
		spec.Annotation = " "
	}
	task, err := object.NewVirtualMachine(c.Client.Client, ref).Reconfigure(ctx, spec)
	if _, err := c.waitTask(ctx, task, err); err != nil {
		return notFoundOr(err, "virtual machine", ref, "setting the annotation of")
	}
	return nil
}

// AttachedTags lists the tag ids on the VM (tests and refresh).
func (c *Client) AttachedTags(ctx context.Context, vm mo.Reference) ([]string, error) {
	tm, err := c.tagManager(ctx)
	if err != nil {
		return nil, err
	}
	ids, err := tm.ListAttachedTags(ctx, vm)
	if err != nil {
		hint := ""
		if rest.IsStatusError(err, http.StatusForbidden) {
			hint = " (listing a VM's tags needs the read privilege, System.Read, on it: any role on the VM's folder holds it)"
		}
		return nil, fmt.Errorf("listing the tags of %s: %w%s", vm.Reference().Value, err, hint)
	}
	sort.Strings(ids)
	return ids, nil
}

// tagManager logs in to vCenter's REST API (the tagging service is not in
// the SOAP API) with the Client's credentials, once per Client.
func (c *Client) tagManager(ctx context.Context) (*tags.Manager, error) {
	c.restMu.Lock()
	defer c.restMu.Unlock()
	if c.rest == nil {
		if c.relogin == nil {
			return nil, errors.New("vSphere tags need a client made by NewClient (its credentials log in to vCenter's REST API)")
		}
		rc := rest.NewClient(c.Client.Client)
		if err := rc.Login(ctx, c.relogin.user); err != nil {
			return nil, fmt.Errorf("logging in to vCenter's REST API (vSphere tags): %w", err)
		}
		c.rest = rc
	}
	return tags.NewManager(c.rest), nil
}

// diffSets: what is in want and not had (attach), in had and not want
// (detach), each sorted.
func diffSets(had, want []string) (attach, detach []string) {
	for _, w := range want {
		if !slices.Contains(had, w) {
			attach = append(attach, w)
		}
	}
	for _, h := range had {
		if !slices.Contains(want, h) {
			detach = append(detach, h)
		}
	}
	sort.Strings(attach)
	sort.Strings(detach)
	return slices.Compact(attach), slices.Compact(detach)
}

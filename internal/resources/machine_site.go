package resources

// A node's datacenter settings (winnode.SiteVM), as hashicorp/vsphere's
// vsphere_virtual_machine takes them: datastore_cluster_id,
// storage_policy_id, tags, custom_attributes, annotation, and disk and
// network_interface blocks (here lists of objects). Shared by windows_node
// and windows_node_pool (machineSchema).

import (
	"context"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
	"github.com/wincluster/terraform-provider-windows/internal/winnode"
)

// storagePolicyIDPattern is a storage policy's id as PBM hands it out
// (vsphere_vm_storage_policy.id, data.vsphere_storage_policy.<name>.id): a UUID.
var storagePolicyIDPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// maxExtraDisks: the extra disks share the first disk's SCSI controller,
// which has 15 units, one of them the system disk's.
const maxExtraDisks = 14

var (
	diskAttrTypes = map[string]attr.Type{"size_gb": types.Int64Type}
	nicAttrTypes  = map[string]attr.Type{"network_id": types.StringType}
)

// siteAttributes are the machine's datacenter settings.
func (s machineSchema) siteAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"datastore_cluster_id": schema.StringAttribute{Optional: true, PlanModifiers: s.nodeReplaceString,
			Validators: []validator.String{vsphereObject(vsphere.DatastoreClusterKind),
				stringvalidator.ConflictsWith(path.MatchRoot("datastore_id"))},
			MarkdownDescription: "Datastore cluster whose Storage DRS places the VM (in place of `datastore_id`), checked against vCenter at a new node's or pool's plan; changing it " + s.onChange + "." +
				accepts(vsphere.DatastoreClusterKind)},
		"storage_policy_id": schema.StringAttribute{Optional: true, PlanModifiers: s.nodeReplaceString,
			Validators: []validator.String{stringvalidator.RegexMatches(storagePolicyIDPattern,
				"must be a storage policy id, a UUID (data.vsphere_storage_policy.<name>.id)")},
			MarkdownDescription: "Storage policy (a VM storage policy's id, `data.vsphere_storage_policy.<name>.id`) of the VM's home and every disk, " +
				"checked against vCenter's policies at a new node's or pool's plan and before the clone; changing it " + s.onChange + "."},
		"tags": schema.SetAttribute{ElementType: types.StringType, Optional: true,
			Validators: []validator.Set{setvalidator.ValueStringsAre(stringvalidator.RegexMatches(vsphere.TagIDPattern,
				"must be a vSphere tag id, urn:vmomi:InventoryServiceTag:<uuid>:GLOBAL (vsphere_tag.<name>.id)"))},
			MarkdownDescription: "vSphere tag ids (`vsphere_tag.<name>.id`) attached to the VM. Changes in place" + s.inPlaceOrRoll() +
				"; tags others attached are left alone."},
		"custom_attributes": schema.MapAttribute{ElementType: types.StringType, Optional: true,
			Validators: []validator.Map{mapvalidator.KeysAre(stringvalidator.RegexMatches(vsphere.CustomAttributeKeyPattern,
				"must be a custom attribute's id (vsphere_custom_attribute.<name>.id), a number"))},
			MarkdownDescription: "Custom attribute values of the VM, by custom attribute id (`vsphere_custom_attribute.<name>.id`). Changes in place" +
				s.inPlaceOrRoll() + "; an attribute removed from the map is cleared."},
		"annotation": schema.StringAttribute{Optional: true,
			MarkdownDescription: "The VM's notes (`\"\"` for none); unset, the provider's own (`Kubernetes Windows node <name> (terraform-provider-windows)`). " +
				"Changes in place" + s.inPlaceOrRoll() + "."},
		"disk": schema.ListNestedAttribute{Optional: true, PlanModifiers: s.nodeReplaceList,
			Validators: []validator.List{listvalidator.SizeAtMost(maxExtraDisks)},
			MarkdownDescription: "Extra empty disks, after the template's, thin provisioned on its first disk's controller and destroyed with the VM. " +
				"They are attached raw: nothing in the guest partitions or formats them. Changing the list " + s.onChange + ".",
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"size_gb": schema.Int64Attribute{Required: true, Validators: []validator.Int64{int64validator.AtLeast(1)},
					MarkdownDescription: "Size in GiB."},
			}}},
		"network_interface": schema.ListNestedAttribute{Optional: true, PlanModifiers: s.nodeReplaceList,
			MarkdownDescription: "Extra NICs, after the template's (which `network_id` places), of the same adapter type; the customization " +
				"gives each DHCP. The node's IP stays the first NIC's. Changing the list " + s.onChange + ".",
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"network_id": schema.StringAttribute{Required: true, Validators: []validator.String{vsphereObject(vsphere.NetworkKind)},
					MarkdownDescription: "Network of the NIC." + accepts(vsphere.NetworkKind)},
			}}},
	}
}

// inPlaceOrRoll says how a pool takes an in-place setting.
func (s machineSchema) inPlaceOrRoll() string {
	if s.onChange == nodeMachine.onChange {
		return ""
	}
	return " for a node; a pool " + s.onChange
}

type diskModel struct {
	SizeGB types.Int64 `tfsdk:"size_gb"`
}

type nicModel struct {
	NetworkID types.String `tfsdk:"network_id"`
}

// site converts the machine's datacenter settings.
func (m *machineModel) site(ctx context.Context, diags *diag.Diagnostics) winnode.SiteVM {
	s := winnode.SiteVM{
		DatastoreClusterID: m.DatastoreClusterID.ValueString(), StoragePolicyID: m.StoragePolicyID.ValueString(),
	}
	if !m.Annotation.IsNull() && !m.Annotation.IsUnknown() {
		s.Annotation = m.Annotation.ValueStringPointer()
	}
	if !m.Tags.IsNull() && !m.Tags.IsUnknown() {
		diags.Append(m.Tags.ElementsAs(ctx, &s.Metadata.Tags, false)...)
		slices.Sort(s.Metadata.Tags)
	}
	if !m.CustomAttributes.IsNull() && !m.CustomAttributes.IsUnknown() {
		s.Metadata.CustomAttributes = map[string]string{}
		diags.Append(m.CustomAttributes.ElementsAs(ctx, &s.Metadata.CustomAttributes, false)...)
	}
	if !m.Disks.IsNull() && !m.Disks.IsUnknown() {
		var disks []diskModel
		diags.Append(m.Disks.ElementsAs(ctx, &disks, false)...)
		for _, d := range disks {
			s.ExtraDiskSizesGB = append(s.ExtraDiskSizesGB, d.SizeGB.ValueInt64())
		}
	}
	if !m.NetworkInterfaces.IsNull() && !m.NetworkInterfaces.IsUnknown() {
		var nics []nicModel
		diags.Append(m.NetworkInterfaces.ElementsAs(ctx, &nics, false)...)
		for _, n := range nics {
			s.ExtraNetworkIDs = append(s.ExtraNetworkIDs, n.NetworkID.ValueString())
		}
	}
	return s
}

// siteRevision is what of the site a pool's revision holds: all of it (a
// pool rolls for each), omitted when unset so that a pool's revision does
// not change when the attributes arrive.
type siteRevision struct {
	DatastoreClusterID string            `json:",omitempty"`
	StoragePolicyID    string            `json:",omitempty"`
	Tags               []string          `json:",omitempty"`
	CustomAttributes   map[string]string `json:",omitempty"`
	Annotation         *string           `json:",omitempty"`
	Disks              []int64           `json:",omitempty"`
	NICs               []string          `json:",omitempty"`
}

func (m *machineModel) siteRevision(ctx context.Context, diags *diag.Diagnostics) *siteRevision {
	s := m.site(ctx, diags)
	r := siteRevision{DatastoreClusterID: s.DatastoreClusterID, StoragePolicyID: s.StoragePolicyID, Tags: s.Metadata.Tags,
		CustomAttributes: maps.Clone(s.Metadata.CustomAttributes), Annotation: s.Annotation, Disks: s.ExtraDiskSizesGB, NICs: s.ExtraNetworkIDs}
	if len(r.CustomAttributes) == 0 {
		r.CustomAttributes = nil
	}
	if r.DatastoreClusterID == "" && r.StoragePolicyID == "" && len(r.Tags) == 0 && r.CustomAttributes == nil && r.Annotation == nil &&
		len(r.Disks) == 0 && len(r.NICs) == 0 {
		return nil
	}
	return &r
}

// refreshSite reads back what of the site changes in place, so that a
// change made outside Terraform plans an update back, as hashicorp/vsphere's
// vsphere_virtual_machine read does (readTagsForResource,
// customattribute.ReadFromResource, config.annotation):
//   - the notes, always: those the state expects (the configured ones, or
//     the provider's own when unset) leave the state alone, any others are
//     the state's annotation, "" for notes cleared;
//   - the tags, when the state has tags (the configuration manages them):
//     all of the VM's, as hashicorp/vsphere reads them, so a tag attached
//     outside Terraform plans to be detached and one detached plans to be
//     attached again; tags is null when the configuration never set it,
//     and then no tag is Terraform's to read;
//   - the custom attributes, the keys the state has only: unlike
//     hashicorp/vsphere, which reads every attribute with a value, since
//     backup software keeps its own on VMs (Veeam's and NetBackup's last
//     backup attributes) and reading those would plan to clear them.
func (m *machineModel) refreshSite(name string, vm *vsphere.VMInfo, tags []string) {
	want := m.Annotation.ValueStringPointer()
	if m.Annotation.IsUnknown() {
		want = nil
	}
	// SetAnnotation writes "" as a space (vsphere/metadata.go): blank notes
	// are the empty ones the state may ask for.
	if expected := winnode.NodeAnnotation(name, want); vm.Annotation != expected && (expected != "" || strings.TrimSpace(vm.Annotation) != "") {
		m.Annotation = types.StringValue(vm.Annotation)
	}
	if !m.Tags.IsNull() {
		elems := make([]attr.Value, 0, len(tags))
		for _, t := range tags {
			elems = append(elems, types.StringValue(t))
		}
		m.Tags = types.SetValueMust(types.StringType, elems)
	}
	if !m.CustomAttributes.IsNull() {
		read := map[string]attr.Value{}
		for k := range m.CustomAttributes.Elements() {
			if v, ok := vm.CustomAttributes[k]; ok {
				read[k] = types.StringValue(v)
			}
		}
		m.CustomAttributes = types.MapValueMust(types.StringType, read)
	}
}

// siteValues are the site's attributes, for unknown checks.
func (m *machineModel) siteValues() []attr.Value {
	return []attr.Value{m.DatastoreClusterID, m.StoragePolicyID, m.Tags, m.CustomAttributes, m.Annotation, m.Disks, m.NetworkInterfaces}
}

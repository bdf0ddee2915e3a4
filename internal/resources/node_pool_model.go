package resources

import (
	"context"
	"slices"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/winnode"
	"github.com/wincluster/terraform-provider-windows/internal/winpool"
)

type nodePoolModel struct {
	ID                    types.String `tfsdk:"id"`
	NamePrefix            types.String `tfsdk:"name_prefix"`
	Replicas              types.Int64  `tfsdk:"replicas"`
	MaxParallel           types.Int64  `tfsdk:"max_parallel"`
	MaxSurge              types.Int64  `tfsdk:"max_surge"`
	MaxUnavailable        types.Int64  `tfsdk:"max_unavailable"`
	ReplaceUnhealthyAfter types.String `tfsdk:"replace_unhealthy_after"`
	FailureDomains        types.List   `tfsdk:"failure_domains"`
	AntiAffinity          types.Bool   `tfsdk:"anti_affinity"`
	machineModel
	Revision      types.String   `tfsdk:"revision"`
	ReadyReplicas types.Int64    `tfsdk:"ready_replicas"`
	Members       types.List     `tfsdk:"members"`
	Timeouts      timeouts.Value `tfsdk:"timeouts"`
}

type failureDomainModel struct {
	Name           types.String `tfsdk:"name"`
	ResourcePoolID types.String `tfsdk:"resource_pool_id"`
	DatastoreID    types.String `tfsdk:"datastore_id"`
	HostID         types.String `tfsdk:"host_id"`
}

type memberModel struct {
	Name             types.String `tfsdk:"name"`
	ID               types.String `tfsdk:"id"`
	VMPath           types.String `tfsdk:"vm_path"`
	InstanceUUID     types.String `tfsdk:"instance_uuid"`
	BIOSUUID         types.String `tfsdk:"bios_uuid"`
	ProviderID       types.String `tfsdk:"provider_id"`
	IPAddress        types.String `tfsdk:"ip_address"`
	WindowsBuildFull types.String `tfsdk:"windows_build_full"`
	KubeletVersion   types.String `tfsdk:"kubelet_version"`
	Revision         types.String `tfsdk:"revision"`
	FailureDomain    types.String `tfsdk:"failure_domain"`
	Health           types.String `tfsdk:"health"`
	NotReadySince    types.String `tfsdk:"not_ready_since"`
	Created          types.String `tfsdk:"created"`
	SSHHostKey       types.String `tfsdk:"ssh_host_key"`
	HealthCauses     types.List   `tfsdk:"health_causes"`
}

// machine is the pool's machine as a windows_node model without a name:
// one conversion into a winnode.Spec, labels, taints and drain settings for
// nodes and members alike.
func (m *nodePoolModel) machine() nodeModel {
	return nodeModel{machineModel: m.machineModel, IPv4: types.ObjectNull(nil)}
}

// pool is what the members should be.
func (m *nodePoolModel) pool(ctx context.Context, password, sshKey string, diags *diag.Diagnostics) winpool.Pool {
	machine := m.machine()
	p := winpool.Pool{
		Prefix: m.NamePrefix.ValueString(), Template: machine.spec(ctx, password, sshKey, diags), Revision: m.Revision.ValueString(),
		Policy: m.policy(), Domains: m.domains(ctx, diags), Drain: machine.drainOptions(ctx, diags),
		AntiAffinity: m.AntiAffinity.ValueBool(),
	}
	if p.MaxParallel == 0 {
		p.MaxParallel = poolDefaultMaxParallel
	}
	return p
}

// emptied is the pool a destroy leaves: no members, all of its n members
// may go at once (max_parallel at a time), and no DRS rule.
func (m *nodePoolModel) emptied(ctx context.Context, n int, diags *diag.Diagnostics) winpool.Pool {
	return winpool.Pool{Prefix: m.NamePrefix.ValueString(), Revision: m.Revision.ValueString(),
		Template: winnode.Spec{ResourcePoolID: m.ResourcePoolID.ValueString()},
		Policy:   winpool.Policy{MaxParallel: int(m.MaxParallel.ValueInt64()), MaxUnavailable: n},
		Drain:    m.drainOptions(ctx, diags)}
}

// domains are the configured failure domains.
func (m *nodePoolModel) domains(ctx context.Context, diags *diag.Diagnostics) []winpool.FailureDomain {
	var in []failureDomainModel
	if !m.FailureDomains.IsNull() && !m.FailureDomains.IsUnknown() {
		diags.Append(m.FailureDomains.ElementsAs(ctx, &in, false)...)
	}
	var out []winpool.FailureDomain
	for _, d := range in {
		out = append(out, winpool.FailureDomain{Name: d.Name.ValueString(), ResourcePoolID: d.ResourcePoolID.ValueString(),
			DatastoreID: d.DatastoreID.ValueString(), HostID: d.HostID.ValueString()})
	}
	return out
}

// revisionInputs are what members are made of: a change to any needs new
// machines. Labels, taints, drain and the roll settings change in place;
// the transport only reaches a member while it joins. Plain Go values, so a
// digest does not change with the framework's formatting.
type revisionInputs struct {
	Template, Folder, ResourcePoolID, DatastoreID, NetworkID, HostID string
	NumCPUs, MemoryMB, DiskSizeGB                                    int64
	LinkedClone                                                      bool
	AdminUser                                                        string
	PasswordVersion                                                  *int64
	TimeZone                                                         string
	NetworkingID, APIServer, ClusterDNS, ClusterDomain               string
	ServiceCIDR, ClusterCIDR                                         string
	Domains                                                          []winpool.FailureDomain
	// ActiveDirectory: empty for none, so a pool without it keeps its
	// revision (and its members) from before the attribute existed.
	ActiveDirectory string `json:",omitempty"`
	// Site: nil when none is set, so a revision made before it existed
	// stays the same.
	Site *siteRevision `json:",omitempty"`
}

// revision computes the revision of the model's inputs; ok is false while
// any is unknown (the plan then cannot tell which members are replaced).
func (m *nodePoolModel) revision(ctx context.Context, diags *diag.Diagnostics) (rev string, ok bool) {
	values := []attr.Value{m.Template, m.Folder, m.ResourcePoolID, m.DatastoreID, m.NetworkID, m.HostID, m.NumCPUs,
		m.MemoryMB, m.DiskSizeGB, m.LinkedClone, m.AdminUser, m.AdminPasswordWOVersion, m.TimeZone, m.NetworkingID,
		m.APIServer, m.ClusterDNS, m.ClusterDomain, m.ServiceCIDR, m.ClusterCIDR, m.FailureDomains, m.ActiveDirectory}
	values = append(values, m.siteValues()...)
	if slices.ContainsFunc(values, func(v attr.Value) bool { return v.IsUnknown() }) {
		return "", false
	}
	in := revisionInputs{
		Template: m.Template.ValueString(), Folder: m.Folder.ValueString(), ResourcePoolID: m.ResourcePoolID.ValueString(),
		DatastoreID: m.DatastoreID.ValueString(), NetworkID: m.NetworkID.ValueString(), HostID: m.HostID.ValueString(),
		NumCPUs: m.NumCPUs.ValueInt64(), MemoryMB: m.MemoryMB.ValueInt64(), DiskSizeGB: m.DiskSizeGB.ValueInt64(),
		LinkedClone: m.LinkedClone.ValueBool(), AdminUser: m.AdminUser.ValueString(), PasswordVersion: m.AdminPasswordWOVersion.ValueInt64Pointer(),
		TimeZone: m.TimeZone.ValueString(), NetworkingID: m.NetworkingID.ValueString(), APIServer: m.APIServer.ValueString(),
		ClusterDNS: m.ClusterDNS.ValueString(), ClusterDomain: m.ClusterDomain.ValueString(), ServiceCIDR: m.ServiceCIDR.ValueString(),
		ClusterCIDR: m.ClusterCIDR.ValueString(), Domains: m.domains(ctx, diags), Site: m.siteRevision(ctx, diags),
	}
	if ad := m.activeDirectory(ctx, diags); ad != nil {
		in.ActiveDirectory = ad.Domain.ValueString() + "|" + ad.OU.ValueString()
	}
	rev, err := winpool.Revision(in)
	if err != nil {
		diags.AddError("Computing the pool's revision", err.Error())
		return "", false
	}
	return rev, true
}

// members reads the members the state records.
func (m *nodePoolModel) members(ctx context.Context, diags *diag.Diagnostics) []winpool.Member {
	var in []memberModel
	if m.Members.IsNull() || m.Members.IsUnknown() {
		return nil
	}
	diags.Append(m.Members.ElementsAs(ctx, &in, false)...)
	out := make([]winpool.Member, 0, len(in))
	for _, mm := range in {
		member := winpool.Member{
			Name: mm.Name.ValueString(),
			Identity: winnode.Identity{VMID: mm.ID.ValueString(), InstanceUUID: mm.InstanceUUID.ValueString(),
				BIOSUUID: mm.BIOSUUID.ValueString(), InventoryPath: mm.VMPath.ValueString()},
			Revision: mm.Revision.ValueString(), FailureDomain: mm.FailureDomain.ValueString(), IP: mm.IPAddress.ValueString(),
			WindowsBuildFull: mm.WindowsBuildFull.ValueString(), KubeletVersion: mm.KubeletVersion.ValueString(),
			SSHHostKey: mm.SSHHostKey.ValueString(), Health: winpool.Health(mm.Health.ValueString()),
		}
		if !mm.HealthCauses.IsNull() && !mm.HealthCauses.IsUnknown() {
			diags.Append(mm.HealthCauses.ElementsAs(ctx, &member.Causes, false)...)
		}
		member.Created, _ = time.Parse(time.RFC3339, mm.Created.ValueString())
		member.NotReadySince, _ = time.Parse(time.RFC3339, mm.NotReadySince.ValueString())
		out = append(out, member)
	}
	return out
}

// setMembers records the members, and how many are Ready.
func (m *nodePoolModel) setMembers(ctx context.Context, members []winpool.Member, diags *diag.Diagnostics) {
	out := make([]memberModel, 0, len(members))
	ready := 0
	for _, mb := range members {
		if mb.Health == winpool.Ready {
			ready++
		}
		causes, d := types.ListValueFrom(ctx, types.StringType, append([]string{}, mb.Causes...))
		diags.Append(d...)
		out = append(out, memberModel{
			Name: types.StringValue(mb.Name), ID: types.StringValue(mb.VMID), VMPath: types.StringValue(mb.InventoryPath),
			InstanceUUID: types.StringValue(mb.InstanceUUID), BIOSUUID: types.StringValue(mb.BIOSUUID),
			ProviderID: types.StringValue(mb.ProviderID()), IPAddress: types.StringValue(mb.IP),
			WindowsBuildFull: types.StringValue(mb.WindowsBuildFull), KubeletVersion: types.StringValue(mb.KubeletVersion),
			Revision: types.StringValue(mb.Revision), FailureDomain: types.StringValue(mb.FailureDomain),
			Health: types.StringValue(string(mb.Health)), NotReadySince: types.StringValue(rfc3339(mb.NotReadySince)),
			Created: types.StringValue(rfc3339(mb.Created)), SSHHostKey: types.StringValue(mb.SSHHostKey), HealthCauses: causes,
		})
	}
	list, d := types.ListValueFrom(ctx, memberObjectType, out)
	diags.Append(d...)
	m.Members = list
	m.ReadyReplicas = types.Int64Value(int64(ready))
}

func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func (m *nodePoolModel) drainOptions(ctx context.Context, diags *diag.Diagnostics) kube.DrainOptions {
	machine := m.machine()
	return machine.drainOptions(ctx, diags)
}

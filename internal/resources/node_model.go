package resources

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	corev1 "k8s.io/api/core/v1"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/networking"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
	"github.com/wincluster/terraform-provider-windows/internal/winnode"
	"github.com/wincluster/terraform-provider-windows/internal/winversion"
)

type nodeModel struct {
	ID   types.String `tfsdk:"id"`
	Name types.String `tfsdk:"name"`
	machineModel
	IPv4             types.Object   `tfsdk:"ipv4"`
	CNI              types.String   `tfsdk:"cni"`
	VMPath           types.String   `tfsdk:"vm_path"`
	InstanceUUID     types.String   `tfsdk:"instance_uuid"`
	BIOSUUID         types.String   `tfsdk:"bios_uuid"`
	ProviderID       types.String   `tfsdk:"provider_id"`
	IPAddress        types.String   `tfsdk:"ip_address"`
	WindowsBuild     types.String   `tfsdk:"windows_build"`
	WindowsBuildFull types.String   `tfsdk:"windows_build_full"`
	KubeletVersion   types.String   `tfsdk:"kubelet_version"`
	PodCIDR          types.String   `tfsdk:"pod_cidr"`
	Ready            types.Bool     `tfsdk:"ready"`
	Joined           types.Bool     `tfsdk:"joined"`
	Health           types.Object   `tfsdk:"health"`
	EffectiveNoProxy types.List     `tfsdk:"effective_no_proxy"`
	Timeouts         timeouts.Value `tfsdk:"timeouts"`
}

// machineModel is what a node's machine is made of and how it joins: the
// attributes of machineSchema (and the hardware), embedded in windows_node's
// model and windows_node_pool's.
type machineModel struct {
	Template               types.String `tfsdk:"template"`
	Folder                 types.String `tfsdk:"folder"`
	ResourcePoolID         types.String `tfsdk:"resource_pool_id"`
	DatastoreID            types.String `tfsdk:"datastore_id"`
	NetworkID              types.String `tfsdk:"network_id"`
	HostID                 types.String `tfsdk:"host_id"`
	NumCPUs                types.Int64  `tfsdk:"num_cpus"`
	MemoryMB               types.Int64  `tfsdk:"memory_mb"`
	DiskSizeGB             types.Int64  `tfsdk:"disk_size_gb"`
	LinkedClone            types.Bool   `tfsdk:"linked_clone"`
	AdminUser              types.String `tfsdk:"admin_user"`
	AdminPasswordWO        types.String `tfsdk:"admin_password_wo"`
	AdminPasswordWOVersion types.Int64  `tfsdk:"admin_password_wo_version"`
	TimeZone               types.String `tfsdk:"time_zone"`
	Transport              types.Object `tfsdk:"transport"`
	ActiveDirectory        types.Object `tfsdk:"active_directory"`
	Labels                 types.Map    `tfsdk:"labels"`
	Taints                 types.List   `tfsdk:"taints"`
	NetworkingID           types.String `tfsdk:"networking_id"`
	APIServer              types.String `tfsdk:"api_server"`
	ClusterDNS             types.String `tfsdk:"cluster_dns"`
	ClusterDomain          types.String `tfsdk:"cluster_domain"`
	ServiceCIDR            types.String `tfsdk:"service_cidr"`
	ClusterCIDR            types.String `tfsdk:"cluster_cidr"`
	SkipChecks             types.List   `tfsdk:"skip_checks"`
	RebootAfterJoin        types.Bool   `tfsdk:"reboot_after_join"`
	ProbeOnRefresh         types.Bool   `tfsdk:"probe_on_refresh"`
	Drain                  types.Object `tfsdk:"drain"`
	Proxy                  types.Object `tfsdk:"proxy"`
	// The datacenter's settings (machine_site.go).
	DatastoreClusterID types.String `tfsdk:"datastore_cluster_id"`
	StoragePolicyID    types.String `tfsdk:"storage_policy_id"`
	Tags               types.Set    `tfsdk:"tags"`
	CustomAttributes   types.Map    `tfsdk:"custom_attributes"`
	Annotation         types.String `tfsdk:"annotation"`
	Disks              types.List   `tfsdk:"disk"`
	NetworkInterfaces  types.List   `tfsdk:"network_interface"`
}

type taintModel struct {
	Key    types.String `tfsdk:"key"`
	Value  types.String `tfsdk:"value"`
	Effect types.String `tfsdk:"effect"`
}

type activeDirectoryModel struct {
	Domain types.String `tfsdk:"domain"`
	OU     types.String `tfsdk:"ou"`
}

// activeDirectory reads active_directory: nil when unset (or unknown).
func (m *machineModel) activeDirectory(ctx context.Context, diags *diag.Diagnostics) *activeDirectoryModel {
	if m.ActiveDirectory.IsNull() || m.ActiveDirectory.IsUnknown() {
		return nil
	}
	var ad activeDirectoryModel
	diags.Append(m.ActiveDirectory.As(ctx, &ad, basetypes.ObjectAsOptions{})...)
	return &ad
}

type ipv4Model struct {
	Address      types.String `tfsdk:"address"`
	PrefixLength types.Int64  `tfsdk:"prefix_length"`
	Gateway      types.String `tfsdk:"gateway"`
	DNSServers   types.List   `tfsdk:"dns_servers"`
}

type drainModel struct {
	Timeout            types.String `tfsdk:"timeout"`
	IgnoreDaemonSets   types.Bool   `tfsdk:"ignore_daemonsets"`
	DeleteEmptyDirData types.Bool   `tfsdk:"delete_emptydir_data"`
	Force              types.Bool   `tfsdk:"force"`
}

// spec converts the plan into the node's plain description.
func (m *nodeModel) spec(ctx context.Context, password, sshKey string, diags *diag.Diagnostics) winnode.Spec {
	s := winnode.Spec{
		Name: m.Name.ValueString(), Template: m.Template.ValueString(), Folder: m.Folder.ValueString(),
		ResourcePoolID: m.ResourcePoolID.ValueString(), DatastoreID: m.DatastoreID.ValueString(),
		NetworkID: m.NetworkID.ValueString(), HostID: m.HostID.ValueString(),
		NumCPUs: int32(m.NumCPUs.ValueInt64()), MemoryMB: m.MemoryMB.ValueInt64(), DiskSizeGB: m.DiskSizeGB.ValueInt64(),
		LinkedClone: m.LinkedClone.ValueBool(), AdminUser: m.AdminUser.ValueString(), AdminPassword: password,
		TimeZone: m.TimeZone.ValueString(), CNI: m.CNI.ValueString(), Networking: m.NetworkingID.ValueString(),
		APIServer: m.APIServer.ValueString(), ClusterDNS: m.ClusterDNS.ValueString(), ClusterDomain: m.ClusterDomain.ValueString(),
		ServiceCIDR: m.ServiceCIDR.ValueString(), ClusterCIDR: m.ClusterCIDR.ValueString(),
		Labels: m.labels(ctx, diags), Taints: m.taints(ctx, diags), Site: m.site(ctx, diags),
	}
	s.IPv4 = m.staticIPv4(ctx, diags)
	if ad := m.activeDirectory(ctx, diags); ad != nil {
		// The join account is the provider's (withJoinAccount).
		s.Domain = &vsphere.DomainJoin{Domain: ad.Domain.ValueString(), OU: ad.OU.ValueString()}
	}
	var d diag.Diagnostics
	s.Transport, d = transportConfig(ctx, m.Transport, s.AdminUser, password, sshKey)
	diags.Append(d...)
	s.HTTPSListener = httpsBootstrap(ctx, m.Transport)
	s.HTTPSListenerAdmit = managementCIDRs(ctx, m.Transport)
	s.SkipNetworkProbe = skipsNetworkProbe(ctx, m.SkipChecks, diags)
	s.RebootAfterJoin = m.RebootAfterJoin.ValueBool()
	s.Proxy = proxyConfig(ctx, m.Proxy, diags)
	return s
}

// staticIPv4 is the ipv4 block's settings, nil for DHCP.
func (m *nodeModel) staticIPv4(ctx context.Context, diags *diag.Diagnostics) *vsphere.StaticIPv4 {
	if m.IPv4.IsNull() || m.IPv4.IsUnknown() {
		return nil
	}
	var ip ipv4Model
	diags.Append(m.IPv4.As(ctx, &ip, basetypes.ObjectAsOptions{})...)
	var dns []string
	diags.Append(ip.DNSServers.ElementsAs(ctx, &dns, false)...)
	return &vsphere.StaticIPv4{Address: ip.Address.ValueString(), PrefixLength: int(ip.PrefixLength.ValueInt64()),
		Gateway: ip.Gateway.ValueString(), DNSServers: dns}
}

// skipsNetworkProbe: skip_checks lists "network-probe".
func skipsNetworkProbe(ctx context.Context, skip types.List, diags *diag.Diagnostics) bool {
	if skip.IsNull() || skip.IsUnknown() {
		return false
	}
	var ids []string
	diags.Append(skip.ElementsAs(ctx, &ids, false)...)
	return slices.Contains(ids, kube.CheckNetworkProbe)
}

func (m *nodeModel) labels(ctx context.Context, diags *diag.Diagnostics) map[string]string {
	out := map[string]string{}
	if !m.Labels.IsNull() && !m.Labels.IsUnknown() {
		diags.Append(m.Labels.ElementsAs(ctx, &out, false)...)
	}
	return out
}

func (m *nodeModel) taints(ctx context.Context, diags *diag.Diagnostics) []corev1.Taint {
	var in []taintModel
	if !m.Taints.IsNull() && !m.Taints.IsUnknown() {
		diags.Append(m.Taints.ElementsAs(ctx, &in, false)...)
	}
	out := make([]corev1.Taint, 0, len(in))
	for _, t := range in {
		out = append(out, corev1.Taint{Key: t.Key.ValueString(), Value: t.Value.ValueString(), Effect: corev1.TaintEffect(t.Effect.ValueString())})
	}
	return out
}

func (m *nodeModel) drainOptions(ctx context.Context, diags *diag.Diagnostics) kube.DrainOptions {
	var d drainModel
	if m.Drain.IsNull() || m.Drain.IsUnknown() {
		return drainDefault
	}
	diags.Append(m.Drain.As(ctx, &d, basetypes.ObjectAsOptions{})...)
	timeout, err := time.ParseDuration(d.Timeout.ValueString())
	if err != nil {
		timeout = drainDefault.Timeout
	}
	return kube.DrainOptions{Timeout: timeout, IgnoreDaemonSets: d.IgnoreDaemonSets.ValueBool(),
		DeleteEmptyDirData: d.DeleteEmptyDirData.ValueBool(), Force: d.Force.ValueBool()}
}

// drainObject is the drain attribute of opts: the schema's default, and an
// imported node's.
func drainObject(opts kube.DrainOptions) types.Object {
	return types.ObjectValueMust(drainAttrTypes, map[string]attr.Value{
		"timeout": types.StringValue(shortDuration(opts.Timeout)), "ignore_daemonsets": types.BoolValue(opts.IgnoreDaemonSets),
		"delete_emptydir_data": types.BoolValue(opts.DeleteEmptyDirData), "force": types.BoolValue(opts.Force),
	})
}

// shortDuration writes a duration as users write it: 10m, not 10m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// sizing is the VM size the model gives, for winnode.PlanHardware.
func (m *nodeModel) sizing() winnode.Sizing {
	size := func(v types.Int64) winnode.Size { return winnode.Size{Value: v.ValueInt64(), Unknown: v.IsUnknown()} }
	return winnode.Sizing{NumCPUs: size(m.NumCPUs), MemoryMB: size(m.MemoryMB), DiskSizeGB: size(m.DiskSizeGB)}
}

// rejoin says whether and why updating the node from state to this plan
// joins it again (winnode.PlanRejoin); private tells an imported node.
func (m *nodeModel) rejoin(ctx context.Context, state nodeModel, private privateGetter) winnode.Rejoin {
	return winnode.PlanRejoin(state.Joined.ValueBool(), !m.NetworkingID.Equal(state.NetworkingID), imported(ctx, private))
}

// updateRequest converts an update of the node from state to this plan.
func (m *nodeModel) updateRequest(ctx context.Context, state nodeModel, private privateGetter, password, sshKey string,
	diags *diag.Diagnostics) winnode.UpdateRequest {
	return winnode.UpdateRequest{
		Spec: m.spec(ctx, password, sshKey, diags),
		Identity: winnode.Identity{VMID: state.ID.ValueString(), InstanceUUID: state.InstanceUUID.ValueString(),
			BIOSUUID: state.BIOSUUID.ValueString(), InventoryPath: state.VMPath.ValueString()},
		Hardware:            winnode.PlanHardware(state.sizing(), m.sizing()),
		Drain:               m.drainOptions(ctx, diags),
		Rejoin:              m.rejoin(ctx, state, private),
		WindowsBuild:        state.WindowsBuild.ValueString(),
		AdoptNetworkingMode: m.adoptsNetworkingMode(),
		Repair:              state.Joined.ValueBool() && !state.Ready.ValueBool() && m.Ready.ValueBool(),
		RepairAgents:        m.repairsAgents(ctx, state),
		Site:                winnode.SiteChange{Had: state.site(ctx, diags), Want: m.site(ctx, diags)},
	}
}

// repairsAgents: the plan restarts the node's agents, which the refresh
// found failing on its Ready Node (planAgentRepair).
func (m *nodeModel) repairsAgents(ctx context.Context, state nodeModel) bool {
	h, ok := state.health(ctx)
	if !ok || !m.Health.IsUnknown() || !state.Joined.ValueBool() || !state.Ready.ValueBool() || !m.NetworkingID.Equal(state.NetworkingID) {
		return false
	}
	_, failing, _ := h.agentsDown(ctx)
	return len(failing) > 0
}

// adoptsNetworkingMode says whether the node takes the mode its networking
// runs: an imported node adopting its networking.
func (m *nodeModel) adoptsNetworkingMode() bool { return m.CNI.IsUnknown() && !m.NetworkingID.IsNull() }

// setUpdated records an updated node.
func (m *nodeModel) setUpdated(res winnode.UpdateResult) {
	plannedReady := m.Ready
	if res.Joined != nil {
		m.setJoined(*res.Joined)
	} else {
		adopts := m.adoptsNetworkingMode()
		m.fromNode(res.Node, false)
		if adopts {
			// The mode is what the networking resource runs.
			m.CNI = types.StringValue(res.NetworkingMode)
		}
		m.settleCNI()
	}
	if res.VM != nil {
		m.fromVM(res.VM)
	}
	m.Transport = withHostKey(m.Transport, "") // null unless a re-join recorded a host key
	if !plannedReady.IsUnknown() {
		// Planned from the state (no re-join, no power cycle): the value
		// the plan promised; the next refresh reads the Node again.
		m.Ready = plannedReady
	}
}

// setIdentity records the VM the moment it exists; every computed value must
// be known in a state saved mid-create, so the rest start empty.
func (m *nodeModel) setIdentity(id winnode.Identity) {
	m.ID = types.StringValue(id.VMID)
	m.VMPath = types.StringValue(id.InventoryPath)
	m.InstanceUUID = types.StringValue(id.InstanceUUID)
	m.BIOSUUID = types.StringValue(id.BIOSUUID)
	m.ProviderID = types.StringValue(id.ProviderID())
	for _, s := range []*types.String{&m.IPAddress, &m.WindowsBuild, &m.WindowsBuildFull, &m.KubeletVersion, &m.PodCIDR} {
		if s.IsUnknown() || s.IsNull() {
			*s = types.StringValue("")
		}
	}
	if m.EffectiveNoProxy.IsUnknown() {
		m.EffectiveNoProxy = types.ListNull(types.StringType) // the join sets it
	}
	for _, b := range []*types.Bool{&m.Ready, &m.Joined} {
		if b.IsUnknown() || b.IsNull() {
			*b = types.BoolValue(false)
		}
	}
	for _, n := range []*types.Int64{&m.NumCPUs, &m.MemoryMB, &m.DiskSizeGB} {
		if n.IsUnknown() {
			*n = types.Int64Null()
		}
	}
	if m.Health.IsUnknown() {
		m.Health = types.ObjectNull(healthAttrTypes) // read once the node is done
	}
	m.Transport = withHostKey(m.Transport, "")
	// A create that fails after this point keeps this state: cni needs a
	// value too.
	m.settleCNI()
}

// setJoined records a joined node.
func (m *nodeModel) setJoined(res winnode.Result) {
	m.setIdentity(res.Identity)
	m.Transport = withHostKey(m.Transport, res.SSHHostKey)
	m.Transport = withRecorded(m.Transport, "winrm_certificate_sha256", res.WinRMCertificateSHA256)
	m.IPAddress = types.StringValue(res.IP)
	m.WindowsBuildFull = types.StringValue(res.WindowsBuildFull)
	m.WindowsBuild = types.StringValue(winversion.TrimUBR(res.WindowsBuildFull))
	if res.CNI != "" {
		m.CNI = types.StringValue(res.CNI)
	}
	m.settleCNI()
	if res.NoProxy != nil {
		elems := make([]attr.Value, 0, len(res.NoProxy))
		for _, e := range res.NoProxy {
			elems = append(elems, types.StringValue(e))
		}
		m.EffectiveNoProxy = types.ListValueMust(types.StringType, elems)
	}
	if res.Node != nil {
		m.fromNode(res.Node, false)
	}
}

// fromVM refreshes the vSphere side.
func (m *nodeModel) fromVM(info *vsphere.VMInfo) {
	m.NumCPUs = types.Int64Value(int64(info.NumCPUs))
	m.MemoryMB = types.Int64Value(info.MemoryMB)
	if len(info.Disks) > 0 {
		m.DiskSizeGB = types.Int64Value(info.Disks[0].SizeGB())
	}
	if ip := info.IP(vsphere.IPFilter{}); ip != "" {
		m.IPAddress = types.StringValue(ip)
	}
	m.BIOSUUID = types.StringValue(info.BIOSUUID)
	m.InstanceUUID = types.StringValue(info.InstanceUUID)
}

// fromNode refreshes the Kubernetes side. With refreshInputs, the labels and
// taints this resource owns are read back from the Node, so a change made
// outside Terraform shows as a diff (only configured keys are compared;
// others' labels and taints are not ours).
func (m *nodeModel) fromNode(node *corev1.Node, refreshInputs bool) {
	m.Joined = types.BoolValue(true)
	m.Ready = types.BoolValue(kube.NodeIsReady(node))
	m.KubeletVersion = types.StringValue(node.Status.NodeInfo.KubeletVersion)
	m.PodCIDR = types.StringValue(node.Spec.PodCIDR)
	if b := node.Labels[winnode.LabelWindowsBuild]; b != "" {
		m.WindowsBuild = types.StringValue(b)
	}
	if node.Spec.ProviderID != "" {
		m.ProviderID = types.StringValue(node.Spec.ProviderID)
	}
	if !refreshInputs {
		return
	}
	if m.Taints.IsNull() {
		// Imported: which taints were ours is unknown, so all are.
		all := make([]attr.Value, 0, len(node.Spec.Taints))
		for _, t := range node.Spec.Taints {
			all = append(all, taintObject(t))
		}
		m.Taints = types.ListValueMust(taintObjectType, all)
	}
	if !m.Labels.IsNull() {
		owned := map[string]attr.Value{}
		for k := range m.Labels.Elements() {
			if v, ok := node.Labels[k]; ok {
				owned[k] = types.StringValue(v)
			}
		}
		m.Labels = types.MapValueMust(types.StringType, owned)
	}
	var kept []attr.Value
	for _, elem := range m.Taints.Elements() {
		obj := elem.(types.Object)
		key := obj.Attributes()["key"].(types.String).ValueString()
		effect := obj.Attributes()["effect"].(types.String).ValueString()
		for _, t := range node.Spec.Taints {
			if t.Key == key && string(t.Effect) == effect {
				kept = append(kept, taintObject(t))
			}
		}
	}
	m.Taints = types.ListValueMust(taintObjectType, kept)
}

// taintObject is a taint as the taints attribute holds it.
func taintObject(t corev1.Taint) attr.Value {
	return types.ObjectValueMust(taintObjectType.AttrTypes, map[string]attr.Value{
		"key": types.StringValue(t.Key), "value": nullIfEmpty(t.Value), "effect": types.StringValue(string(t.Effect)),
	})
}

// settleCNI gives cni, computed, a value when nothing recorded one (a
// create that failed before its join, an imported node: importDefaults).
func (m *nodeModel) settleCNI() {
	if m.CNI.IsUnknown() || m.CNI.IsNull() {
		m.CNI = types.StringValue(networking.Default().Name())
	}
}

// writeOnlySecrets reads the write-only password and SSH key from the
// configuration (they are never in the plan or state).
func writeOnlySecrets(ctx context.Context, config tfsdk.Config, diags *diag.Diagnostics) (password, sshKey string) {
	var p, k types.String
	diags.Append(config.GetAttribute(ctx, path.Root("admin_password_wo"), &p)...)
	var transport types.Object
	diags.Append(config.GetAttribute(ctx, path.Root("transport"), &transport)...)
	if !transport.IsNull() && !transport.IsUnknown() {
		diags.Append(config.GetAttribute(ctx, path.Root("transport").AtName("ssh_private_key_wo"), &k)...)
	}
	return p.ValueString(), k.ValueString()
}

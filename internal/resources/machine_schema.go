package resources

import (
	"fmt"
	"maps"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/timezone"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// machineSchema is what a node's machine is made of and how it joins: the
// attributes windows_node and windows_node_pool share (a pool member is a
// windows_node with a generated name). They differ in what a change does:
// a node's create-only inputs replace it (their plan modifiers), a pool has
// none and rolls new members in instead (it plans the roll itself).
type machineSchema struct {
	replaceString, nodeReplaceString []planmodifier.String
	replaceBool                      []planmodifier.Bool
	replaceInt64, nodeReplaceInt64   []planmodifier.Int64
	nodeReplaceObject                []planmodifier.Object
	nodeReplaceList                  []planmodifier.List
	// onChange says what changing a create-only input does.
	onChange string
	// noHTTPSBootstrap is why the resource refuses transport.https_bootstrap.
	noHTTPSBootstrap string
}

var (
	nodeMachine = machineSchema{replaceString: replaceString, nodeReplaceString: nodeReplaceString, replaceBool: replaceBool,
		replaceInt64: replaceInt64, nodeReplaceInt64: nodeReplaceInt64, nodeReplaceObject: nodeReplaceObject, nodeReplaceList: []planmodifier.List{nodeReplace}, onChange: "replaces the node"}
	poolMachine = machineSchema{onChange: "rolls new members in (max_surge, max_unavailable)",
		noHTTPSBootstrap: "a pool's members would each need their own pinned certificate, which members do not record yet; give windows_node resources https_bootstrap, or let the pool use the default transport (vmtools)"}
)

// withMachine adds the machine's attributes to a resource's own.
func withMachine(s machineSchema, own map[string]schema.Attribute) map[string]schema.Attribute {
	all := s.attributes()
	maps.Copy(all, s.siteAttributes())
	maps.Copy(all, own)
	return all
}

func (s machineSchema) attributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"template": schema.StringAttribute{
			// No plan modifier: the resource's ModifyPlan resolves the prior
			// and the new value (template_identity.go).
			Required: true,
			MarkdownDescription: "The golden image template, for example `windows_golden_image.ltsc2022.template_id`." + accepts(vsphere.VMKind) +
				" Given in another form that names the same VM (`template_path` for `template_id`), it changes in place and touches nothing; " +
				"a different template " + s.onChange + ", and so does a template known only at apply (an image rebuilt in the same apply).",
			Validators: []validator.String{vsphereObject(vsphere.VMKind)},
		},
		"folder": schema.StringAttribute{
			Required: true, PlanModifiers: s.replaceString,
			MarkdownDescription: "VM folder, for example `/dc1/vm/k8s-windows` (created if missing)." + accepts(vsphere.FolderKind),
			Validators:          []validator.String{vsphereObject(vsphere.FolderKind)},
		},
		"resource_pool_id": schema.StringAttribute{Required: true, PlanModifiers: s.replaceString,
			Validators:          []validator.String{vsphereObject(vsphere.ResourcePoolKind)},
			MarkdownDescription: "Resource pool of the VM." + accepts(vsphere.ResourcePoolKind)},
		"datastore_id": schema.StringAttribute{Optional: true, PlanModifiers: s.nodeReplaceString,
			Validators:          []validator.String{vsphereObject(vsphere.DatastoreKind)},
			MarkdownDescription: "Datastore of the VM; defaults to the template's." + accepts(vsphere.DatastoreKind)},
		"network_id": schema.StringAttribute{Optional: true, PlanModifiers: s.nodeReplaceString,
			Validators:          []validator.String{vsphereObject(vsphere.NetworkKind)},
			MarkdownDescription: "Network of the VM's NIC; changing it " + s.onChange + "." + accepts(vsphere.NetworkKind)},
		"host_id": schema.StringAttribute{Optional: true, PlanModifiers: s.nodeReplaceString,
			Validators:          []validator.String{vsphereObject(vsphere.HostKind)},
			MarkdownDescription: "ESXi host to place the VM on; defaults to one DRS picks." + accepts(vsphere.HostKind)},
		"linked_clone": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false), PlanModifiers: s.replaceBool,
			MarkdownDescription: "Clone from the template's snapshot (fast; the node depends on the template). Defaults to a full clone."},
		"admin_user": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(bootstrap.DefaultAdminUser), PlanModifiers: s.replaceString,
			MarkdownDescription: "Administrator account of the image. Defaults to `" + bootstrap.DefaultAdminUser + "`." +
				"Use the built-in Administrator account (RID 500, whatever its name): Windows gives any other local administrator a filtered, " +
				"non-elevated token over WinRM and SSH (UAC remote restrictions) unless `LocalAccountTokenFilterPolicy` is 1 under " +
				"`HKLM\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\Policies\\System` on the template, and the steps fail with access denied. " +
				"Another name gets a plan-time warning."},
		"admin_password_wo": schema.StringAttribute{Required: true, WriteOnly: true, Sensitive: true,
			MarkdownDescription: "The secret each node's own Administrator password is derived from: the customization sets, and the transport " +
				"authenticates with, `Wn1-` followed by the unpadded base64url (RFC 4648 §5) of Argon2id(this password, salt " +
				"`terraform-provider-windows/admin-password/v1`, a zero byte, the node's lower-case name; 2 passes, 19 MiB, 1 lane, 32 bytes), " +
				"so no two nodes share an Administrator password (one node's NT hash opens no other) and nothing is stored. Compute a node's password " +
				"with the same derivation to log on by hand. Write-only: never stored in the state."},
		"admin_password_wo_version": schema.Int64Attribute{Optional: true, PlanModifiers: s.nodeReplaceInt64,
			MarkdownDescription: "Any number; changing it " + s.onChange + " with the current `admin_password_wo`."},
		"time_zone": schema.StringAttribute{Optional: true, Computed: true, PlanModifiers: append([]planmodifier.String{timeZoneDefault{}}, s.replaceString...),
			Validators: []validator.String{timeZoneID()},
			MarkdownDescription: timeZoneDescription + " The join sets it on the guest (`Set-TimeZone`). Defaults to `" + timezone.Default + "` for a new " +
				"resource; one whose state has a zone keeps it while the argument is unset (resources made when the default was " +
				"`GMT Standard Time` keep that). Changing it " + s.onChange + "."},
		"transport": transportSchema(s.noHTTPSBootstrap),
		"active_directory": schema.SingleNestedAttribute{
			Optional: true, PlanModifiers: s.nodeReplaceObject,
			MarkdownDescription: "Join the node to an Active Directory domain in its guest customization, as `vsphere_virtual_machine`'s " +
				"`windows_options` `join_domain`, `domain_ou`, `domain_admin_user` and `domain_admin_password` do (vSphere's CustomizationIdentification), " +
				"with the provider's `active_directory` join account. Windows' unattended join does not fail the customization when it fails, so the " +
				"node's first step reads its outcome (`C:\\Windows\\debug\\NetSetup.LOG`) and a failed join fails the create with Windows' message " +
				"and the setting to fix. A node created again under the same name (a replace, a reset VM) reuses its computer account, which Windows " +
				"allows the account's creator (KB5020276); an account of the same name that another account created fails the join " +
				"(`NERR_AccountReuseBlockedByPolicy`). On destroy the provider deletes the computer account through the provider's `active_directory.ldap_url`; " +
				"without one it stays in the domain, and the plan warns. Changing it " + s.onChange + ".",
			Attributes: map[string]schema.Attribute{
				"domain": schema.StringAttribute{Required: true, MarkdownDescription: "The domain's DNS name, for example `corp.example.com`."},
				"ou": schema.StringAttribute{Optional: true, MarkdownDescription: "The OU the computer account is created in, as a distinguished name " +
					"(`OU=Kubernetes Nodes,DC=corp,DC=example,DC=com`); defaults to the domain's Computers container. Needs vCenter 8.0 Update 2 or later " +
					"(the customization's `domainOU`)."},
			},
		},
		"labels": schema.MapAttribute{
			ElementType: types.StringType, Optional: true,
			MarkdownDescription: "Node labels this resource owns (others' labels are left alone); `node.kubernetes.io/windows-build` is always set from the guest. " +
				"Keys in the `kubernetes.io` and `k8s.io` domains are refused but the `node.kubernetes.io/` and `kubelet.kubernetes.io/` labels a kubelet may set itself.",
			Validators: []validator.Map{mapvalidator.KeysAre(nodeLabelKey()), mapvalidator.ValueStringsAre(labelValue())},
		},
		"taints": schema.ListNestedAttribute{
			Optional: true, Computed: true,
			Default: listdefault.StaticValue(types.ListValueMust(taintObjectType, []attr.Value{taintObject(defaultTaint)})),
			MarkdownDescription: "Taints of the node, registered by the kubelet at join so no Linux pod lands first. Defaults to `" + defaultTaint.ToString() + "`, " +
				"which `windows_runtime_class` tolerates; set `[]` for none.",
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"key":    schema.StringAttribute{Required: true, Validators: []validator.String{nodeTaintKey()}, MarkdownDescription: "Taint key, outside the kubernetes.io and k8s.io domains."},
				"value":  schema.StringAttribute{Optional: true, Validators: []validator.String{labelValue()}, MarkdownDescription: "Taint value."},
				"effect": schema.StringAttribute{Required: true, Validators: []validator.String{stringvalidator.OneOf("NoSchedule", "PreferNoSchedule", "NoExecute")}, MarkdownDescription: "`NoSchedule`, `PreferNoSchedule` or `NoExecute`."},
			}},
		},
		"api_server":     schema.StringAttribute{Optional: true, PlanModifiers: s.nodeReplaceString, Validators: []validator.String{httpsURL()}, MarkdownDescription: "API server URL the kubelet uses; defaults to the provider's."},
		"cluster_dns":    schema.StringAttribute{Optional: true, PlanModifiers: s.nodeReplaceString, Validators: []validator.String{ipv4Address()}, MarkdownDescription: "Cluster DNS service IP; discovered from the kube-dns Service by default."},
		"cluster_domain": schema.StringAttribute{Optional: true, PlanModifiers: s.nodeReplaceString, Validators: []validator.String{clusterDomain()}, MarkdownDescription: "Cluster domain; discovered (kubelet-config, kubeadm-config) by default."},
		"service_cidr":   schema.StringAttribute{Optional: true, PlanModifiers: s.nodeReplaceString, Validators: []validator.String{cidr()}, MarkdownDescription: "Service CIDR; discovered (ServiceCIDR API, kubeadm-config) by default."},
		"cluster_cidr":   schema.StringAttribute{Optional: true, PlanModifiers: s.nodeReplaceString, Validators: []validator.String{cidr()}, MarkdownDescription: "Pod network CIDR; discovered (kubeadm-config, flannel, controller manager) by default."},
		"reboot_after_join": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "Restart the node once after its join, and count the create done only when it is `Ready` again from the new boot, " +
				"its networking agents run again since the restart and its network probe passes again (an after-reboot check, as Flatcar's update " +
				"operator calls its gate). For images whose networking does not survive a reboot: such a node fails its create, naming what did not " +
				"come back, instead of failing later. Applies to creates only (for a pool, to the members it makes from now on): changing it " +
				"replaces nothing. Defaults to `false`.",
		},
		"probe_on_refresh": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "Run the network probe again at every refresh, from a pod on each Ready node (cluster DNS, a ClusterIP Service, " +
				"a pod on another node, the node's own NodePort, as at the end of the join; for a node of `cni = \"none\"`, once the " +
				"cluster's CNI runs its Windows agents there). A failed probe makes the node's `health` unhealthy with the failure among its " +
				"causes, and a pool member `network_probe_failed`, which `replace_unhealthy_after` counts. Costs each refresh one probe pod per " +
				"node. Defaults to `false`.",
		},
		"skip_checks": schema.ListAttribute{
			ElementType: types.StringType, Optional: true,
			MarkdownDescription: "Readiness check IDs (or families) not to enforce, at plan or at create, for users who know better, for example `[\"linux-headroom\"]`. " +
				"`\"windows-support\"` acknowledges the plan's warning that the Windows Server release is outside the releases Kubernetes supports for " +
				"the cluster's version (the API server's, read by discovery) or past Microsoft's extended support: a warning, never an error, silenced by listing it.",
			Validators: []validator.List{listvalidator.ValueStringsAre(checkID())},
		},
		"proxy": proxyAttribute("The join writes it into containerd's and the kubelet's service environment (`HTTP_PROXY`, `HTTPS_PROXY`, `NO_PROXY`), "+
			"from which containerd's image pulls take it. Unset, the node keeps what its image's `proxy` set (containerd's environment and WinHTTP's proxy; "+
			"the kubelet gets none): the image's proxy is the site's.", s.onChange, s.nodeReplaceObject),
		"drain": schema.SingleNestedAttribute{
			Optional: true, Computed: true,
			Default:             objectdefault.StaticValue(drainObject(drainDefault)),
			MarkdownDescription: "How the node is drained before it is deleted (destroyed or replaced) or power-cycled; the plan's warning of such a change describes it.",
			Attributes: map[string]schema.Attribute{
				"timeout": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(shortDuration(drainDefault.Timeout)),
					Validators:          []validator.String{duration()},
					MarkdownDescription: fmt.Sprintf("How long evictions may wait for PodDisruptionBudgets. Defaults to `%s`.", shortDuration(drainDefault.Timeout))},
				"ignore_daemonsets": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(drainDefault.IgnoreDaemonSets),
					MarkdownDescription: fmt.Sprintf("Leave DaemonSet pods (they would come back). Defaults to `%t`.", drainDefault.IgnoreDaemonSets)},
				"delete_emptydir_data": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(drainDefault.DeleteEmptyDirData),
					MarkdownDescription: fmt.Sprintf("Evict pods with emptyDir volumes (their data is lost). Defaults to `%t`.", drainDefault.DeleteEmptyDirData)},
				"force": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(drainDefault.Force),
					MarkdownDescription: fmt.Sprintf("Delete pods no controller manages. Defaults to `%t`.", drainDefault.Force)},
			},
		},
	}
}

package resources

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/boolvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
	"github.com/wincluster/terraform-provider-windows/internal/winpool"
)

// Defaults of a pool's roll, as a Deployment's (maxSurge 25%, maxUnavailable
// 25%) would be for a small pool, but never below capacity: one new member
// at a time, Ready with its agents before an old one is drained.
const (
	poolDefaultMaxParallel    = 10
	poolDefaultMaxSurge       = 1
	poolDefaultMaxUnavailable = 0
)

var (
	memberAttrTypes = map[string]attr.Type{
		"name": types.StringType, "id": types.StringType, "vm_path": types.StringType, "instance_uuid": types.StringType,
		"bios_uuid": types.StringType, "provider_id": types.StringType, "ip_address": types.StringType,
		"windows_build_full": types.StringType, "kubelet_version": types.StringType, "revision": types.StringType,
		"failure_domain": types.StringType, "health": types.StringType, "not_ready_since": types.StringType,
		"created": types.StringType, "ssh_host_key": types.StringType, "health_causes": types.ListType{ElemType: types.StringType},
	}
	memberObjectType = types.ObjectType{AttrTypes: memberAttrTypes}
	domainAttrTypes  = map[string]attr.Type{
		"name": types.StringType, "resource_pool_id": types.StringType, "datastore_id": types.StringType, "host_id": types.StringType,
	}
)

func (r *nodePoolResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	member := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: desc}
	}
	resp.Schema = schema.Schema{
		Version: 1, // state_upgrade.go
		MarkdownDescription: "A pool of Kubernetes Windows worker nodes made from one machine template, kept at `replicas` members: the " +
			"way a Cluster API MachineDeployment or an OpenShift Windows MachineSet keeps its machines, driven by `terraform apply`. " +
			"Each member is made exactly as a `windows_node` is (clone, sysprep, join with a short-lived bootstrap token, Ready, " +
			"providerID, labels and taints, its networking agents Running), and named `<name_prefix>-<5 characters>` within the " +
			"15 characters of a Windows computer name; a member keeps its name for life.\n\n" +
			"**Scaling.** More `replicas` creates members concurrently (`max_parallel` at a time, whatever Terraform's " +
			"`-parallelism`); fewer drains (PodDisruptionBudgets honoured) and removes the unhealthy members first, then the newest.\n\n" +
			"**Rolling replacement.** A change to what members are made of (the template, placement, hardware, networking, " +
			"the customization, the cluster overrides: everything but `labels`, `taints`, `drain` and the roll settings) rolls new " +
			"members in: up to `max_surge` new members are created, and an old member is drained and removed only once a new one is " +
			"Ready with its agents, keeping at least `replicas - max_unavailable` members Ready throughout. The plan says how many " +
			"members are replaced, which and in what order. An apply interrupted midway leaves every member in the state, the new ones " +
			"with the new revision, and the next apply resumes the roll. `labels` and `taints` change on every member in place.\n\n" +
			"**Self-healing.** Refresh reads every member's VM and Node, and judges its health past Ready as `windows_node`'s " +
			"`health` does (its networking agents' pods, the cluster DNS's endpoints), into `members[*].health` and " +
			"`members[*].health_causes`: one vSphere round trip and four Kubernetes requests (the Windows Nodes, the networking's " +
			"DaemonSets, its agents' pods, kube-dns's EndpointSlices), whatever the pool's size. A member whose VM is gone, whose Node " +
			"is gone, whose create did not finish, or (with `replace_unhealthy_after`) whose Node has been NotReady, or whose agents " +
			"have not been Running and Ready, that long is replaced on the next apply, and the plan says why and what the refresh " +
			"found; the plan warns of the other unhealthy members, naming each and its causes.\n\n" +
			"**Import** takes the name prefix (`win`: every Windows node whose name starts with `win-`) or a comma-separated list of " +
			"node names; the first apply adopts the members as they are, without replacing them. **Destroy** drains every member, " +
			"deletes its Node and destroys its VM.\n\n" +
			"Members get their addresses by DHCP (a pool has no per-member static `ipv4`); use `windows_node` for a node with a static address.",
		Attributes: withMachine(poolMachine, map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true, PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
				MarkdownDescription: "The name prefix."},
			"name_prefix": schema.StringAttribute{
				Required: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
				MarkdownDescription: fmt.Sprintf("Prefix of the member names, which are `<name_prefix>-<%d random characters>`: a lower-case DNS label of at most %d characters, "+
					"so a member's name fits the 15 characters of a Windows computer name (NetBIOS). Changing it replaces the pool.",
					winpool.NameSuffixLength, winpool.MaxPrefixLength),
				Validators: []validator.String{namePrefix()},
			},
			"replicas": schema.Int64Attribute{Required: true, Validators: []validator.Int64{int64validator.Between(0, 1000)},
				MarkdownDescription: "How many members the pool keeps."},
			"max_parallel": schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(poolDefaultMaxParallel),
				Validators: []validator.Int64{int64validator.Between(1, 100)},
				MarkdownDescription: fmt.Sprintf("How many members are created or removed at once, independent of Terraform's `-parallelism`. Defaults to `%d`. "+
					"Their clones still take turns for their template's host's provisioning units (the provider's `vsphere.provisioning_units_per_host`: "+
					"by default 4 full clones of one template at once, across every pool and node of the run), as vCenter would queue them.", poolDefaultMaxParallel)},
			"max_surge": schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(poolDefaultMaxSurge),
				Validators: []validator.Int64{int64validator.Between(0, 1000)},
				MarkdownDescription: fmt.Sprintf("How many members above `replicas` a roll may create before old members are removed. Defaults to `%d`. "+
					"`max_surge` and `max_unavailable` cannot both be 0.", poolDefaultMaxSurge)},
			"max_unavailable": schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(poolDefaultMaxUnavailable),
				Validators:          []validator.Int64{int64validator.Between(0, 1000)},
				MarkdownDescription: fmt.Sprintf("How many members below `replicas` may be unavailable during a roll. Defaults to `%d`: capacity never drops.", poolDefaultMaxUnavailable)},
			"replace_unhealthy_after": schema.StringAttribute{Optional: true, Validators: []validator.String{duration()},
				MarkdownDescription: "Replace a member whose Node has been NotReady, or whose networking agents have not been Running and " +
					"Ready, this long (a Go duration such as `15m`) on the next apply. Off by default: such a member is reported in " +
					"`members[*].health` and `members[*].health_causes`, named in a plan warning, and left alone."},
			"num_cpus": schema.Int64Attribute{Optional: true, Validators: []validator.Int64{int64validator.Between(1, 128)},
				MarkdownDescription: "vCPUs of each member; defaults to the template's. Changing it rolls new members in."},
			"memory_mb": schema.Int64Attribute{Optional: true, Validators: []validator.Int64{int64validator.Between(2048, 4194304), multipleOf(4)},
				MarkdownDescription: "Memory of each member in MiB (a multiple of 4); defaults to the template's. Changing it rolls new members in."},
			"disk_size_gb": schema.Int64Attribute{Optional: true, Validators: []validator.Int64{int64validator.AtLeast(1)},
				MarkdownDescription: "Size of each member's first disk in GiB; defaults to the template's. Changing it rolls new members in."},
			"networking_id": schema.StringAttribute{Optional: true,
				MarkdownDescription: "The `id` of the cluster's `windows_node_networking`, as on `windows_node`: its mode decides the members' CNI " +
					"configuration, and a member is done when its agents run. Changing it rolls new members in."},
			"failure_domains": schema.ListNestedAttribute{
				Optional: true,
				MarkdownDescription: "Placements the members are spread over, as failure domains: each new member goes to the domain with the fewest " +
					"members (the first listed on a tie). A domain's ids override `resource_pool_id`, `datastore_id` and `host_id`. Changing the list rolls new members in.",
				Validators: []validator.List{listvalidator.SizeAtLeast(1)},
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name": schema.StringAttribute{Required: true, Validators: []validator.String{dnsLabel()}, MarkdownDescription: "Name of the domain, recorded in `members[*].failure_domain`."},
					"resource_pool_id": schema.StringAttribute{Optional: true, Validators: []validator.String{vsphereObject(vsphere.ResourcePoolKind)},
						MarkdownDescription: "The domain's resource pool (or cluster's root pool)." + accepts(vsphere.ResourcePoolKind)},
					"datastore_id": schema.StringAttribute{Optional: true, Validators: []validator.String{vsphereObject(vsphere.DatastoreKind)},
						MarkdownDescription: "The domain's datastore." + accepts(vsphere.DatastoreKind)},
					"host_id": schema.StringAttribute{Optional: true, Validators: []validator.String{vsphereObject(vsphere.HostKind)},
						MarkdownDescription: "The domain's ESXi host." + accepts(vsphere.HostKind)},
				}},
			},
			"anti_affinity": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				Validators: []validator.Bool{boolvalidator.ConflictsWith(path.MatchRoot("failure_domains"))},
				MarkdownDescription: "Keep the members on different ESXi hosts where DRS can: a DRS VM anti-affinity rule `" + winpool.RulePrefix + "<name_prefix>` " +
					"on the cluster of `resource_pool_id`, kept listing exactly the members' VMs (removed while fewer than two are left). Not " +
					"mandatory: DRS never refuses a power-on for it, so a pool larger than the cluster's hosts still runs. Changes in place " +
					"(DRS migrates running members). Conflicts with `failure_domains`, which may span clusters. Defaults to `false`."},
			"revision": schema.StringAttribute{Computed: true,
				MarkdownDescription: "Digest of what the members are made of; a member whose `revision` differs is replaced by the next apply."},
			"ready_replicas": schema.Int64Attribute{Computed: true, MarkdownDescription: "How many members are Ready (as last read)."},
			"members": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "Every member, sorted by name, as last created or read; a member is here the moment its VM exists.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":               member("Node name, VM name and Windows computer name."),
					"id":                 member("Managed object id of the VM."),
					"vm_path":            member("Inventory path of the VM."),
					"instance_uuid":      member("vCenter instance UUID of the VM."),
					"bios_uuid":          member("SMBIOS UUID of the VM."),
					"provider_id":        member("The Node's `spec.providerID`, `vsphere://<BIOS UUID>`."),
					"ip_address":         member("The node IP."),
					"windows_build_full": member("Windows build with its update revision."),
					"kubelet_version":    member("kubelet version the Node reports."),
					"revision":           member("The pool revision the member was made from; empty if its create did not finish."),
					"failure_domain":     member("The failure domain the member was placed in."),
					"health": member("`ready`, `not_ready` (see `not_ready_since`), `agents_not_ready` (the Node is Ready and its networking " +
						"agents are not Running and Ready, or have no pod on it), `not_joined` (the VM backs no Node) or `vm_missing` " +
						"(the VM is gone); the next apply replaces `not_joined` and `vm_missing` members, and `not_ready` and " +
						"`agents_not_ready` ones past `replace_unhealthy_after`."),
					"not_ready_since": member("When the member turned `not_ready` (the Node's Ready condition's transition) or " +
						"`agents_not_ready` (the first agent pod's Ready transition, or the first refresh that found an agent without a " +
						"pod), RFC 3339; empty otherwise."),
					"health_causes": schema.ListAttribute{Computed: true, ElementType: types.StringType,
						MarkdownDescription: "What is wrong with the member past Ready, one line each, as the last refresh read it from the " +
							"API server: the Node NotReady with its reason, each agent not Running and Ready with its pod's state and last " +
							"output, the cluster DNS without endpoints (which no replacement repairs). Empty when healthy."},
					"created":      member("When the member's VM was created (RFC 3339)."),
					"ssh_host_key": member("The SSH host key the member presented at its join, over SSH (each member has its own)."),
				}},
			},
		}),
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		},
	}
}

// namePrefix validates a pool's name prefix: a DNS label short enough for
// the generated names to be Windows computer names.
func namePrefix() validator.String {
	return stringCheck{fmt.Sprintf("name prefix (DNS-1123 label of at most %d characters)", winpool.MaxPrefixLength), func(s string) []string {
		problems := validation.IsDNS1123Label(s)
		if len(s) > winpool.MaxPrefixLength {
			problems = append(problems, fmt.Sprintf("it has %d characters; with the \"-\" and the %d-character suffix, member names must fit "+
				"the 15 characters of a Windows computer name (NetBIOS)", len(s), winpool.NameSuffixLength))
		}
		if s != "" && (s[0] < 'a' || s[0] > 'z') {
			problems = append(problems, "it must start with a letter")
		}
		return problems
	}}
}

package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/winnode"
)

var (
	taintObjectType = types.ObjectType{AttrTypes: map[string]attr.Type{
		"key": types.StringType, "value": types.StringType, "effect": types.StringType,
	}}
	drainAttrTypes = map[string]attr.Type{
		"timeout": types.StringType, "ignore_daemonsets": types.BoolType, "delete_emptydir_data": types.BoolType, "force": types.BoolType,
	}
	// drainDefault is the drain attribute's default, and an imported node's.
	drainDefault = winnode.DefaultDrain()
	// defaultTaint is the taints attribute's default, which
	// windows_runtime_class tolerates by default.
	defaultTaint = winnode.DefaultTaint()
)

// nodeHealthSchema is the health attribute: what the last refresh (or the
// create, or an update that repaired the node) read of the node past Ready.
func nodeHealthSchema() schema.SingleNestedAttribute {
	str := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: desc}
	}
	return schema.SingleNestedAttribute{
		Computed: true, PlanModifiers: []planmodifier.Object{objectplanmodifier.UseStateForUnknown()},
		MarkdownDescription: "The node's health past Ready, as the last refresh read it from the Kubernetes API (the create and an " +
			"update that repairs the node read it again). A refresh judges what it can read without touching the guest or the " +
			"cluster: the Node's Ready condition and nodeInfo, the networking agents' pods on the node, and the cluster DNS's ready " +
			"endpoints, one EndpointSlice list and one pod list per run however many nodes there are. It does not run the network " +
			"probe's pod again: that would create a pod on every node at every plan (a plan with read-only credentials could not " +
			"refresh) and cost seconds per node; what the probe's paths need that the API shows is read instead. Refreshing it " +
			"never shows as a change by itself. The plan repairs what the provider can (a NotReady node's stopped services, agents " +
			"failing on a Ready node: planned as an update in place, `health` known after apply) and warns, naming the node and the " +
			"cause, of what it cannot (the cluster DNS without endpoints, agents only starting).",
		Attributes: map[string]schema.Attribute{
			"status": str("`healthy`, or `unhealthy` when `causes` lists anything."),
			"causes": schema.ListAttribute{Computed: true, ElementType: types.StringType,
				MarkdownDescription: "What is wrong, one line each: the Node NotReady with its reason and message, each agent not Running " +
					"and Ready with its pod's state, restarts and last output line, the cluster DNS without ready endpoints, a Node gone."},
			"node_ready": schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the Node's Ready condition is True."},
			"agents": schema.MapAttribute{Computed: true, ElementType: types.StringType,
				MarkdownDescription: "Each networking agent (`kube-proxy`, `flannel`) by name: `running` (its pod on the node is Running " +
					"and Ready), `missing` (no pod on the node), `not_ready` (running, not Ready), or its pod's waiting reason or phase " +
					"(`CrashLoopBackOff`, `ContainerCreating`, `Pending`). `missing`, `CrashLoopBackOff`, image and container errors and " +
					"`Failed` are failing: the next apply restarts the agent. Empty without a networking that runs agents."},
			"services": schema.MapAttribute{Computed: true, ElementType: types.StringType,
				MarkdownDescription: "`kubelet` and `containerd` as the Node's Ready condition tells them, without touching the guest: " +
					"`running`, `not_reporting` (the kubelet stopped posting the Node's status: stopped, hung or cut off), `down` " +
					"(the kubelet reports its container runtime down) or `unknown`."},
			"cluster_dns_ready_endpoints": schema.Int64Attribute{Computed: true,
				MarkdownDescription: "Ready endpoints behind Service `kube-system/kube-dns`; 0 means no pod resolves names through the cluster DNS."},
			"kubelet_version":           str("The kubelet version in the Node's nodeInfo."),
			"container_runtime_version": str("The container runtime in the Node's nodeInfo, for example `containerd://2.2.7`."),
		},
	}
}

func (r *nodeResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	computed := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: desc, PlanModifiers: keepString}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A Kubernetes Windows worker node on vSphere: a VM cloned from a golden image template, customized and joined to the cluster with a short-lived bootstrap token. " +
			"Create returns once the Node is Ready, its networking agents run and a network probe passes; destroy drains the node first.",
		Attributes: withMachine(nodeMachine, map[string]schema.Attribute{
			"id": computed("Managed object id of the VM."),
			"name": schema.StringAttribute{
				Required: true, PlanModifiers: replaceString,
				MarkdownDescription: "Kubernetes node name, VM name and Windows computer name: a lower-case DNS label of at most 15 characters (the NetBIOS limit).",
				Validators:          []validator.String{computerName()},
			},
			"num_cpus": schema.Int64Attribute{Optional: true, Computed: true, PlanModifiers: []planmodifier.Int64{int64planmodifier.UseStateForUnknown()},
				MarkdownDescription: "vCPUs; defaults to the template's. Changed in place: while the VM runs when CPU hot-add applies it, otherwise with a drain and a power cycle, which the plan warns about.",
				Validators:          []validator.Int64{int64validator.Between(1, 128)}},
			"memory_mb": schema.Int64Attribute{Optional: true, Computed: true, PlanModifiers: []planmodifier.Int64{int64planmodifier.UseStateForUnknown()},
				MarkdownDescription: "Memory in MiB (a multiple of 4); defaults to the template's. Changed in place like `num_cpus`.",
				Validators:          []validator.Int64{int64validator.Between(2048, 4194304), multipleOf(4)}},
			"disk_size_gb": schema.Int64Attribute{Optional: true, Computed: true, PlanModifiers: []planmodifier.Int64{int64planmodifier.UseStateForUnknown()},
				MarkdownDescription: "Size of the first disk in GiB; defaults to the template's. Can only grow, in place while the VM runs (the Windows volume is not extended).",
				Validators:          []validator.Int64{int64validator.AtLeast(1)}},
			"ipv4": schema.SingleNestedAttribute{
				Optional: true, PlanModifiers: nodeReplaceObject,
				MarkdownDescription: "Static IPv4 settings; omit for DHCP.",
				Attributes: map[string]schema.Attribute{
					"address":       schema.StringAttribute{Required: true, Validators: []validator.String{ipv4Address()}, MarkdownDescription: "Address, for example `10.0.0.21`."},
					"prefix_length": schema.Int64Attribute{Required: true, Validators: []validator.Int64{int64validator.Between(1, 32)}, MarkdownDescription: "Prefix length, for example `24`."},
					"gateway":       schema.StringAttribute{Optional: true, Validators: []validator.String{ipv4Address()}, MarkdownDescription: "Default gateway."},
					"dns_servers": schema.ListAttribute{ElementType: types.StringType, Optional: true,
						Validators: []validator.List{listvalidator.ValueStringsAre(ipv4Address())}, MarkdownDescription: "DNS servers of the NIC."},
				},
			},
			"networking_id": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "The `id` of the cluster's `windows_node_networking` (for example `windows_node_networking.this.id`). Its `cni` " +
					"decides the node's networking: with `flannel` the join writes the node's CNI configuration and create returns only once " +
					"the Node is Ready and its `kube-proxy` and `flannel` pods are Running and Ready on it. Referencing it also orders " +
					"Terraform: the networking is created before the node and destroyed after it. Omit it when the cluster's own CNI " +
					"(Calico, Antrea) installs itself on Windows and you manage nothing cluster-level with this provider. Setting or " +
					"changing it on an existing node joins that node again in place.",
			},
			"cni": schema.StringAttribute{
				Computed: true, PlanModifiers: keepString,
				MarkdownDescription: "The networking mode the node joined with: the `cni` of the `windows_node_networking` that `networking_id` " +
					"references, `none` without one.",
			},
			"vm_path":            computed("Inventory path of the VM."),
			"instance_uuid":      computed("vCenter instance UUID of the VM."),
			"bios_uuid":          computed("SMBIOS UUID of the VM, as the guest sees it."),
			"provider_id":        computed("The Node's `spec.providerID`: `vsphere://<BIOS UUID>`, as the vSphere cloud provider and CSI driver expect."),
			"ip_address":         computed("The node IP (APIPA and HNS vEthernet addresses are ignored)."),
			"windows_build":      computed("Windows build read from the guest (`10.0.20348`), the node's `node.kubernetes.io/windows-build` label."),
			"windows_build_full": computed("Windows build with its update revision, for example `10.0.20348.2340`."),
			"kubelet_version":    computed("kubelet version the Node reports."),
			"pod_cidr":           computed("Pod CIDR the controller manager allocated to the Node."),
			"ready": schema.BoolAttribute{Computed: true, PlanModifiers: []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()},
				MarkdownDescription: "Whether the Node's Ready condition is True (as last read). An update keeps it, except one that joins the node " +
					"again or may power-cycle it, which leaves it known after apply."},
			"joined": schema.BoolAttribute{Computed: true, PlanModifiers: []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()},
				MarkdownDescription: "Whether the Node exists in the cluster. A Node deleted outside Terraform while the VM lives " +
					"shows up as `joined = false`, and the next apply joins it again."},
			"health": nodeHealthSchema(),
			"effective_no_proxy": schema.ListAttribute{Computed: true, ElementType: types.StringType,
				PlanModifiers: []planmodifier.List{listplanmodifier.UseStateForUnknown()},
				MarkdownDescription: "The `NO_PROXY` the join gave containerd and the kubelet: `proxy.no_proxy` and what it missed of `localhost`, `127.0.0.1`, " +
					"the cluster's Service and pod CIDRs, the API server's host and the node's subnet (its static `ipv4` network, else its address). Null without `proxy`."},
		}),
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		},
	}
}

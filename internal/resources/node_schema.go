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
		Version: 1, // state_upgrade.go
		MarkdownDescription: "A Kubernetes Windows worker node on vSphere. Create clones the template (a `windows_golden_image` or any " +
			"Kubernetes-ready Windows template) with a sysprep customization, saves the VM in the state at once, waits for the guest's " +
			"IP (property-collector wait), discovers the cluster from its API (API server and CA, service and cluster CIDRs, DNS service " +
			"IP, domain — never typed in by hand), creates a short-lived bootstrap token (never an admin kubeconfig on the node), runs the " +
			"join steps over WinRM or SSH, waits for the Node to become Ready (a watch), sets `spec.providerID` to `vsphere://<BIOS UUID>`, " +
			"the labels (with `node.kubernetes.io/windows-build` read from the guest) and the taints, and deletes the token. A node is done " +
			"when it works, not when the kubelet says Ready: with a `windows_node_networking` (`networking_id`) whose mode runs node agents, " +
			"create also waits until the node's agents (kube-proxy and flannel for `flannel`) are Running and Ready on it; a timeout names " +
			"each agent, its pod, its container state, restarts and last output. The kubelet runs as a Windows service under kube-log-runner " +
			"(log in `C:\\var\\log\\kubelet\\kubelet.log`, rotated, whose last lines a node that never turns Ready reports), depends on " +
			"containerd and is restarted by the service control manager when it exits.\n\n" +
			"The bootstrap token and the administrator password never reach a diagnostic, a log (`TF_LOG=trace` included), the state " +
			"or the plan: a failing step that carries one (`join-files`, which writes the bootstrap kubeconfig) reports its error " +
			"record without echoing its script, and with the secret and its encodings (base64, UTF-16LE base64) replaced by " +
			"`(sensitive value)`. Over SSH (`transport.type = \"ssh\"`) the guest's host key is recorded in `transport.ssh_host_key` " +
			"at the first connection and required at every later one (a re-join): a guest that presents another key is refused " +
			"until a key verified out of band is set there. Nodes cloned from a `windows_golden_image` have keys of their own (the " +
			"image removes its keys before sysprep and each clone's sshd creates new ones at first boot); clones of a template " +
			"that kept its keys (image-builder's, for one) all present the template's.\n\n" +
			"A node with networking agents counts as created once it passes a network probe: a pod on it (Kubernetes' e2e image " +
			"agnhost pinned by digest, in the provider's namespace, scheduled onto the node on its RuntimeClass as a user's pod would be) " +
			"resolves `kube-dns.kube-system.svc.<domain>` through the cluster DNS, connects to its " +
			"ClusterIP through the node's kube-proxy, to a DNS pod on another node, and to the node's own NodePort (a Service the probe " +
			"puts in front of that pod, and deletes). While the cluster DNS has no ready endpoint (after a control-plane outage its " +
			"pods are marked not Ready until their kubelets report again) the probe first waits for one, on a watch, up to 2 minutes. " +
			"A failure names the path, what was expected, the cluster DNS's endpoints and the " +
			"host's evidence read over its transport (HNS networks, endpoints and load balancers as `Get-HnsNetwork`, `Get-HnsPolicyList` " +
			"and `hnsdiag list all` show them, and kube-proxy's and flanneld's last log lines, secrets redacted) " +
			"(`skip_checks = [\"network-probe\"]` opts out, with a plan warning). `reboot_after_join` restarts the node once after " +
			"that and requires it all again from the new boot. " +
			"Every refresh records the node's health past Ready in `health`, from the Kubernetes API alone (see `health`). The plan " +
			"repairs what the provider can, as an update in place: a node NotReady (containerd and the kubelet started again over " +
			"its transport, then a wait for Ready and its agents), and agents failing on a Ready node (no pod, CrashLoopBackOff: " +
			"their pods evicted so their DaemonSets make them anew, then a wait for every agent). What it cannot repair is a plan " +
			"warning naming the node and the cause: the cluster DNS without endpoints, agents that are only starting.\n\n" +
			"A new node is checked against the same readiness checks as `data.windows_cluster`, as early as their facts allow, and a " +
			"failing one stops it with its remedy (`skip_checks` opts out per check). The plan runs the cluster-wide checks (node CIDR " +
			"allocation, flannel VXLAN settings, Linux DaemonSets, Linux headroom) whatever else is unknown, so also when the golden image " +
			"is built in the same apply; it runs the checks of the image (version skew against the template's kubelet, Windows build) when " +
			"the template is known, and otherwise `windows_golden_image` checks its `kubernetes_version` at plan. Terraform plans the node " +
			"again when it applies it, with the values of its dependencies and the provider settings known, and that plan runs every " +
			"check before anything is cloned: that is where an image built in the same apply is checked, and where all checks run when " +
			"the plan could not reach the cluster. A `windows_linux_daemonset_guard` the " +
			"node depends on (`depends_on`) counts at plan time for the DaemonSets it will guard.\n\n" +
			"What an apply does to a running node is in the plan: every change below that drains, restarts or power-cycles it adds a " +
			"warning naming the node, what happens and how the drain behaves.\n\n" +
			"In place and undisrupted: `labels`, `taints`, `drain`, `transport`, `skip_checks`, `timeouts`; `disk_size_gb` growing (the virtual " +
			"disk grows while the VM runs; extend the Windows volume in the guest); `num_cpus` and `memory_mb` increases that the VM's CPU " +
			"and memory hot-add can apply while it runs.\n\n" +
			"In place, drained and power-cycled: `num_cpus` or `memory_mb` when hot-add is off or capacity is removed. The node is " +
			"cordoned and drained, the guest shut down, the VM reconfigured and powered on; once the Node is Ready again it is uncordoned. " +
			"`ready` and `ip_address` are known only after apply.\n\n" +
			"In place, joined again (kubelet restarted, no drain, no reboot): a change of `networking_id`, and a Node deleted outside " +
			"Terraform (`joined = false`).\n\n" +
			"In place, nothing done: `template` given in another form that names the same VM (a `windows_golden_image`'s " +
			"`template_path` instead of its `template_id`; the plan resolves both in vSphere).\n\n" +
			"Replaced: `name`, `template` (another VM, or one known only at apply), `folder`, the placement ids, `linked_clone`, " +
			"`admin_user`, `admin_password_wo_version`, `time_zone`, `ipv4` and the cluster overrides. The old node is drained and " +
			"destroyed (before or, with `create_before_destroy`, after the new one is created).\n\n" +
			"A drain (of a power cycle, a replacement or a destroy) cordons the node and evicts its pods through the eviction API, so " +
			"PodDisruptionBudgets are honoured: an eviction a budget refuses is retried until `drain.timeout`, after which the apply fails " +
			"with the node still cordoned (the next apply uncordons a node a power cycle left cordoned; a destroy interrupted during " +
			"its drain, by Ctrl-C, uncordons the node it cordoned, which stays in the state). An API server away for a moment " +
			"(restarting) does not fail the drain: its calls are retried until `drain.timeout`. DaemonSet pods stay " +
			"(`drain.ignore_daemonsets`); pods with emptyDir volumes and pods no controller manages stop the drain before anything is " +
			"evicted unless `drain.delete_emptydir_data` or `drain.force` allows them.\n\n" +
			"Delete cordons and drains the node, waits for its volumes to detach, shuts the guest down, detaches the disks the VM did not get from its template (their files stay), deletes the Node and destroys the VM. A failure after the clone " +
			"leaves the resource tainted, never an untracked VM.\n\n" +
			"Import takes the VM's inventory path, its instance UUID or the Node's providerID (`vsphere://<BIOS UUID>`), and names the " +
			"node after the Node the VM backs; the resource's identity is the instance UUID, and the `windows_node` list resource " +
			"finds the VMs that are Windows nodes (see the guide *Importing existing Windows nodes*). vSphere and the Node tell the placement's resource pool, the taints and " +
			"the build, but not the template, the static `ipv4` settings, the datastore/network/host ids, the cluster overrides or which " +
			"labels were this resource's: the first apply after an import records them in place, without replacing the node.",
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
					"changing it on an existing node joins that node again in place: the upgrade path for nodes of the earlier design " +
					"(their flanneld and kube-proxy Windows services are removed).",
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
		}),
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		},
	}
}

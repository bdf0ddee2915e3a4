package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
)

func (r *linuxDaemonSetGuardResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Keeps Linux-only DaemonSets (kube-proxy, flannel, node exporters) off Windows nodes by adding " +
			"`kubernetes.io/os: linux` to the node selector of their pod template: what the Windows guides do by hand with `kubectl patch`. " +
			"The selector is written by server-side apply under its own field manager (`" + kube.GuardFieldManager + "`), and no other field " +
			"is touched. Kubernetes treats `nodeSelector` as one atomic value, so the guard applies the whole map (the DaemonSet's own " +
			"entries plus `kubernetes.io/os`) and owns it, shared with the DaemonSet's manifest when that already sets the same map.\n\n" +
			"Destroying the guard gives the selector back: it disappears when the guard added it to an empty selector, stays when the " +
			"manifest sets it too, and otherwise returns to the manager of the DaemonSet's pod template without `kubernetes.io/os`, " +
			"so the DaemonSet ends up exactly as before. Changing a node selector changes the pod template, so the DaemonSet rolls its pods.\n\n" +
			"A tool that later re-applies the DaemonSet (Helm, `kubectl apply`) may drop the entry: the next plan shows it in `guarded` and " +
			"the apply sets it again. Do not let two guards select the same DaemonSet: they share the field manager.\n\n" +
			"A `windows_node` that depends on the guard (`depends_on`) is planned and created after it: its plan-time readiness checks count " +
			"the DaemonSets the guard will select as guarded, and its create checks them again once the guard has applied.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "`<namespace>` when `names` is omitted, else `<namespace>/<name>,<name>...` (sorted): the import ID.",
			},
			"namespace": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Namespace of the DaemonSets, for example `kube-system`. Changing it replaces the guard.",
				Validators:          []validator.String{dnsLabel()},
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"names": schema.SetAttribute{
				ElementType: types.StringType,
				Optional:    true,
				MarkdownDescription: "DaemonSets to guard. Omit to guard every DaemonSet of the namespace that, when the guard is created, has no " +
					"`kubernetes.io/os` node selector or OS node affinity; DaemonSets created later are not added. Naming a DaemonSet that " +
					"does not exist is an error at apply.",
				Validators: []validator.Set{
					setvalidator.SizeAtLeast(1),
					setvalidator.ValueStringsAre(dnsSubdomain()),
				},
			},
			"selected": schema.SetAttribute{
				ElementType: types.StringType,
				Computed:    true,
				MarkdownDescription: "The DaemonSets this guard manages: `names`, or the DaemonSets found at creation when `names` is omitted. " +
					"A DaemonSet deleted outside Terraform is dropped with a warning.",
			},
			"guarded": schema.SetAttribute{
				ElementType: types.StringType,
				Computed:    true,
				MarkdownDescription: "The selected DaemonSets whose pod template currently has `kubernetes.io/os: linux`. The plan expects all of " +
					"`selected`: a selector removed or changed outside Terraform shows up here as drift, and the apply sets it again.",
			},
		},
	}
}

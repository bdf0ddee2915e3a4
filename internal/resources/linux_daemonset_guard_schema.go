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
)

func (r *linuxDaemonSetGuardResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Keeps Linux-only DaemonSets (kube-proxy, flannel, node exporters) off Windows nodes by adding `kubernetes.io/os: linux` to their pod template's node selector, as the Windows guides do by hand with `kubectl patch`.",
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

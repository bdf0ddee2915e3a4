package resources

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/clients"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
	"github.com/wincluster/terraform-provider-windows/internal/winnode"
)

// proxyModel is the proxy attribute of windows_golden_image, windows_node
// and windows_node_pool.
type proxyModel struct {
	HTTP    types.String `tfsdk:"http"`
	HTTPS   types.String `tfsdk:"https"`
	NoProxy types.List   `tfsdk:"no_proxy"`
}

var proxyAttrTypes = map[string]attr.Type{"http": types.StringType, "https": types.StringType, "no_proxy": types.ListType{ElemType: types.StringType}}

// proxyAttribute is the proxy block; what uses it differs between the image
// and a node (use), and what changing it does (onChange, with its plan
// modifiers for a node).
func proxyAttribute(use, onChange string, mods []planmodifier.Object) schema.SingleNestedAttribute {
	url := func(which string) schema.StringAttribute {
		return schema.StringAttribute{Optional: true, Validators: []validator.String{proxyURL("proxy." + which)},
			MarkdownDescription: "The proxy for " + which + "://  URLs, as `http://host:port` (no credentials: they would land in the services' environment in clear)."}
	}
	return schema.SingleNestedAttribute{
		Optional: true, PlanModifiers: mods,
		MarkdownDescription: "The site's HTTP proxy, for guests that reach the internet (or the mirror) only through one. " + use +
			" Changing it " + onChange + ".",
		Attributes: map[string]schema.Attribute{
			"http": func() schema.StringAttribute {
				a := url("http")
				// A proxy block names a proxy: at least one of the two.
				a.Validators = append(a.Validators, stringvalidator.AtLeastOneOf(path.MatchRoot("proxy").AtName("https")))
				return a
			}(),
			"https": url("https"),
			"no_proxy": schema.ListAttribute{Optional: true, ElementType: types.StringType,
				Validators: []validator.List{listvalidator.ValueStringsAre(stringCheck{"no_proxy entry", func(s string) []string {
					if err := bootstrap.ValidateNoProxyEntry(s); err != nil {
						return []string{err.Error()}
					}
					return nil
				}})},
				MarkdownDescription: "Hosts, domains (`.corp.example.com`), IP addresses and CIDRs reached without the proxy, as Go's `NO_PROXY` reads them. " +
					"A node's list always gets `localhost`, `127.0.0.1`, the cluster's Service and pod CIDRs, the API server's host and the node's subnet added " +
					"(the plan warns when yours misses one). WinHTTP's bypass list takes the hosts and domains only (it has no CIDRs).",
			},
		},
	}
}

func proxyURL(attr string) validator.String {
	return stringCheck{"proxy URL", func(s string) []string {
		if err := bootstrap.ValidateProxyURL(attr, s); err != nil {
			return []string{err.Error()}
		}
		return nil
	}}
}

// proxyConfig converts the attribute; NoProxy is the user's list as given
// (a node's join completes it: bootstrap.CompleteNoProxy).
func proxyConfig(ctx context.Context, v types.Object, diags *diag.Diagnostics) bootstrap.Proxy {
	if v.IsNull() || v.IsUnknown() {
		return bootstrap.Proxy{}
	}
	var m proxyModel
	diags.Append(v.As(ctx, &m, basetypes.ObjectAsOptions{})...)
	p := bootstrap.Proxy{HTTP: m.HTTP.ValueString(), HTTPS: m.HTTPS.ValueString()}
	if !m.NoProxy.IsNull() && !m.NoProxy.IsUnknown() {
		diags.Append(m.NoProxy.ElementsAs(ctx, &p.NoProxy, false)...)
	}
	return p
}

// warnNoProxy warns at plan when the user's no_proxy misses an address the
// node reaches without the proxy (the join adds it anyway): the cluster's
// networks and the API server as discovery finds them (or the overrides),
// and the node's static subnet. Unknown facts are left out; a discovery
// that cannot run at plan is skipped, the join still completes the list.
func warnNoProxy(ctx context.Context, cl *clients.Clients, what string, m machineModel, ipv4 *vsphere.StaticIPv4, diags *diag.Diagnostics) {
	if m.Proxy.IsNull() || m.Proxy.IsUnknown() {
		return
	}
	p := proxyConfig(ctx, m.Proxy, diags)
	if !p.IsSet() {
		return // unknown until apply, or refused by the schema's validator
	}
	service, cluster, api := m.ServiceCIDR.ValueString(), m.ClusterCIDR.ValueString(), m.APIServer.ValueString()
	if cl != nil && (service == "" || cluster == "" || api == "") {
		if net, err := cl.ClusterNetwork(ctx); err == nil {
			if service == "" && len(net.ServiceCIDRs) > 0 {
				service = net.ServiceCIDRs[0]
			}
			if cluster == "" && len(net.ClusterCIDRs) > 0 {
				cluster = net.ClusterCIDRs[0]
			}
			if api == "" {
				api = net.APIEndpoint
			}
		}
	}
	facts := winnode.NoProxyFacts(winnode.Spec{IPv4: ipv4}, service, cluster, api, "")
	if _, missing := bootstrap.CompleteNoProxy(p.NoProxy, facts); len(missing) > 0 {
		diags.AddAttributeWarning(path.Root("proxy").AtName("no_proxy"), what+": proxy.no_proxy misses addresses the node reaches directly",
			fmt.Sprintf("proxy.no_proxy does not hold %s: the cluster's Service and pod networks, the API server and the node's subnet never go through the proxy, "+
				"so the join adds them to containerd's and the kubelet's NO_PROXY. List them in proxy.no_proxy to make the plan say what the node gets.",
				strings.Join(missing, ", ")))
	}
}

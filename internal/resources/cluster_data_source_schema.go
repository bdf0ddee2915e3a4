package resources

import (
	"context"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	utilversion "k8s.io/apimachinery/pkg/util/version"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
)

func (d *clusterDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads the Kubernetes cluster (through the provider's `kubernetes` settings) and reports what a Windows node " +
			"needs to join it, with readiness `checks` of what would otherwise show only when a Windows node fails. Put `ready` in a " +
			"`precondition` to stop a plan before anything is built.",
		Attributes: map[string]schema.Attribute{
			"kubernetes_version": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Kubernetes version of the kubelet about to be installed on Windows nodes, for example `v1.36.3`. " +
					"Adds the `" + kube.CheckVersionSkew + "` check: the kubelet must not be newer than the API server nor more than three minor versions older.",
				Validators: []validator.String{kubernetesRelease()},
			},
			"windows_build": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Windows build of the nodes about to be added, for example `10.0.20348` (from `windows_golden_image.<name>.windows_build`). " +
					"Adds the `" + kube.CheckWindowsBuild + "` check: fails for builds older than Windows Server 2019 (`10.0.17763`), warns when existing Windows nodes run other builds.",
				Validators: []validator.String{windowsBuild()},
			},
			"skip_checks": schema.SetAttribute{
				ElementType: types.StringType,
				Optional:    true,
				MarkdownDescription: "Check IDs to leave out, for users who know better. A family ID skips all its checks: `linux-daemonset` skips " +
					"every `linux-daemonset:<namespace>/<name>`. Families: " + checkFamiliesMarkdown() + ".",
				Validators: []validator.Set{setvalidator.ValueStringsAre(checkID())},
			},
			"api_endpoint": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "URL of the Kubernetes API server the provider talks to.",
			},
			"server_version": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "Version of the API server, for example `v1.36.3`.",
			},
			"service_cidrs": schema.ListAttribute{
				ElementType: types.StringType,
				Computed:    true,
				MarkdownDescription: "Service IP ranges: the `kubernetes` ServiceCIDR object, else `networking.serviceSubnet` of `kube-system/kubeadm-config`, " +
					"else the kube-apiserver's `--service-cluster-ip-range`. Empty when no source names them.",
			},
			"cluster_cidrs": schema.ListAttribute{
				ElementType: types.StringType,
				Computed:    true,
				MarkdownDescription: "Pod networks: `networking.podSubnet` of `kube-system/kubeadm-config`, else the `Network` of flannel's `net-conf.json`, " +
					"else the kube-controller-manager's `--cluster-cidr`. Empty when no source names them.",
			},
			"dns_service_ip": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "Cluster IP of the DNS Service (`kube-system/kube-dns`, else the one labelled `k8s-app=kube-dns`): the kubelet's `clusterDNS`. Null when there is none.",
			},
			"cluster_domain": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "Cluster DNS domain: `clusterDomain` of `kube-system/kubelet-config`, else `networking.dnsDomain` of `kube-system/kubeadm-config`, " +
					"else `cluster.local`.",
			},
			"sources": schema.MapAttribute{
				ElementType: types.StringType,
				Computed:    true,
				MarkdownDescription: "Where each discovered fact came from, keyed by attribute name (`service_cidrs`, `cluster_cidrs`, `dns_service_ip`, `cluster_domain`); " +
					"a fact no source names is absent.",
			},
			"node_cidr_allocation": schema.BoolAttribute{
				Computed: true,
				MarkdownDescription: "Whether the controller manager allocates node pod CIDRs: true when every node has `spec.podCIDR`; with no nodes yet, " +
					"the kube-controller-manager's `--allocate-node-cidrs` flag when it runs as a visible pod; null when neither tells.",
			},
			"cni": schema.SingleNestedAttribute{
				Computed:            true,
				MarkdownDescription: "The network plugin detected.",
				Attributes: map[string]schema.Attribute{
					"name": schema.StringAttribute{
						Computed:            true,
						MarkdownDescription: "`flannel` (ConfigMap `kube-flannel-cfg`), `calico` (DaemonSet `calico-node`), `antrea` (DaemonSet `antrea-agent`) or `unknown`.",
					},
					"source": schema.StringAttribute{
						Computed:            true,
						MarkdownDescription: "The object the plugin was recognised by; null for `unknown`.",
					},
					"backend": schema.StringAttribute{
						Computed:            true,
						MarkdownDescription: "flannel's backend type (`vxlan`, `host-gw`, ...; flannel's default `udp` when unset); null for other plugins.",
					},
					"vni": schema.Int64Attribute{
						Computed:            true,
						MarkdownDescription: "flannel's VXLAN network identifier (flannel's default 1 when unset; Windows needs 4096); null unless the backend is `vxlan`.",
					},
					"port": schema.Int64Attribute{
						Computed:            true,
						MarkdownDescription: "flannel's VXLAN UDP port (flannel's default 8472 when unset; Windows needs 4789); null unless the backend is `vxlan`.",
					},
				},
			},
			"windows_nodes": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "Existing Windows nodes (label `kubernetes.io/os=windows`), by name.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name": schema.StringAttribute{Computed: true, MarkdownDescription: "Node name."},
					"windows_build": schema.StringAttribute{
						Computed:            true,
						MarkdownDescription: "The `node.kubernetes.io/windows-build` label, else the build of the kernel version the kubelet reports; null when neither says.",
					},
					"ready":           schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the node's `Ready` condition is `True`."},
					"kubelet_version": schema.StringAttribute{Computed: true, MarkdownDescription: "Kubelet version the node reports; null before its kubelet has reported."},
				}},
			},
			"checks": schema.ListNestedAttribute{
				Computed: true,
				MarkdownDescription: "Readiness checks, cluster-wide ones first, then one per object (`linux-daemonset:<namespace>/<name>`, " +
					"`linux-headroom:<node>`).",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"id":      schema.StringAttribute{Computed: true, MarkdownDescription: "Stable check ID, usable in `skip_checks`."},
					"status":  schema.StringAttribute{Computed: true, MarkdownDescription: "`pass`, `warn` or `fail`. Only `fail` makes `ready` false."},
					"message": schema.StringAttribute{Computed: true, MarkdownDescription: "What was found."},
					"remedy":  schema.StringAttribute{Computed: true, MarkdownDescription: "Exactly what to change (flag, ConfigMap key, command); empty when the check passed."},
				}},
			},
			"ready": schema.BoolAttribute{
				Computed:            true,
				MarkdownDescription: "True when no check failed. Use it in a `precondition`.",
			},
		},
	}
}

// kubernetesRelease accepts a full release version, with or without the
// leading "v" ("v1.36.3", "1.36.3", "v1.37.0-rc.1").
func kubernetesRelease() validator.String {
	return stringCheck{"Kubernetes version", func(s string) []string {
		if _, err := utilversion.ParseSemantic(s); err != nil {
			return []string{"write a release version such as v1.36.3"}
		}
		return nil
	}}
}

// checkID accepts a check family ID or a family ID with an object
// ("linux-daemonset:kube-system/kube-proxy").
func checkID() validator.String {
	return stringCheck{"readiness check ID", func(s string) []string {
		family, object, hasObject := strings.Cut(s, ":")
		if !slices.Contains(kube.CheckFamilies, family) {
			return []string{"known check IDs are " + strings.Join(kube.CheckFamilies, ", ") + " (optionally followed by :<object>)"}
		}
		if hasObject && object == "" {
			return []string{"name the object after the colon, or leave the colon out to skip the whole family"}
		}
		return nil
	}}
}

func checkFamiliesMarkdown() string {
	quoted := make([]string, 0, len(kube.CheckFamilies))
	for _, f := range kube.CheckFamilies {
		quoted = append(quoted, "`"+f+"`")
	}
	return strings.Join(quoted, ", ")
}

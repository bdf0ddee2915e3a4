package bench

import (
	"fmt"
	"strings"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/artifacts"
)

// skipCIDRCheck works around a race of the readiness checks. windows_node
// runs them in ModifyPlan, and Terraform plans every node again at apply time
// (the template becomes known only then), while the nodes created before it
// are joining. A Node whose kubelet has just registered it, before the
// controller manager allocated its pod CIDR, then fails node-cidr-allocation
// ("2 of 10 nodes have no pod CIDR (spec.podCIDR): ap0-7, ap0-8. The
// controller manager does not allocate node pod CIDRs") and the apply fails:
// here in 1 of 4 applies of 20 nodes and 1 of 2 of 100. Skipping the check
// leaves the requests the checks make unchanged (Skip filters results, not
// reads).
const skipCIDRCheck = `  skip_checks       = ["node-cidr-allocation"]`

// config is a golden image and count nodes cloned from it, named
// <prefix>-<index>, against the sandbox (as the acceptance tests configure
// them, with count). extra adds attributes to every node.
func (w *world) config(image, prefix string, count int, extra string) string {
	sb := w.sb
	a := sb.Artifacts
	vc := sb.VSphere
	ports := sb.Hosts.Ports()
	var b strings.Builder
	fmt.Fprintf(&b, `terraform {
  required_providers {
    windows = {
      source  = "%s/windows"
      version = "%s"
    }
  }
}

provider "windows" {} # VSPHERE_*, KUBE_CONFIG_PATH

locals {
  transport = {
    port           = %d
    ca_certificate = file(%q)
  }
}

resource "windows_golden_image" "bench" {
  name               = %q
  folder             = "/DC0/vm/golden"
  source_template    = %q
  resource_pool_id   = %q
  datastore_id       = %q
  network_id         = %q
  admin_password_wo  = %q
  transport          = local.transport
  kubernetes_version = %q
  artifacts_base_url = %q
  kubelet_sha256     = %q
  kube_proxy_sha256  = %q
  containerd_url     = %q
  containerd_sha256  = %q
  cni_plugins_url    = %q
  cni_plugins_sha256 = %q
  kube_log_runner_sha256    = %q
  flanneld_url              = %q
  flanneld_sha256           = %q
  flannel_cni_plugin_url    = %q
  flannel_cni_plugin_sha256 = %q
}

# Nodes turn Ready only with a network plugin: flannel's agents, as HostProcess pods.
resource "windows_node_networking" "bench" {
  cni                      = "flannel"
  allow_destroy_with_nodes = true
}

resource "windows_node" "n" {
  count             = %d
  name              = "%s-${count.index}"
  template          = windows_golden_image.bench.template_path
  folder            = "/DC0/vm/windows"
  resource_pool_id  = %q
  network_id        = %q
  admin_password_wo = %q
  transport         = local.transport
  networking_id     = windows_node_networking.bench.id
%s
}
`, providerNamespace, providerVersion,
		ports.WinRMHTTPS, sb.CAFile,
		image, vc.Templates["2022"], vc.ResourcePoolID, vc.DatastoreID, vc.NetworkID, sb.AdminPassword,
		artifacts.KubernetesVersion, a.BaseURL, a.Kubelet.SHA256, a.KubeProxy.SHA256, a.Containerd.URL, a.Containerd.SHA256,
		a.CNIPlugins.URL, a.CNIPlugins.SHA256,
		a.KubeLogRunner.SHA256, a.Flanneld.URL, a.Flanneld.SHA256, a.FlannelCNIPlugin.URL, a.FlannelCNIPlugin.SHA256,
		count, prefix, vc.ResourcePoolID, vc.NetworkID, sb.AdminPassword, extra)
	return b.String()
}

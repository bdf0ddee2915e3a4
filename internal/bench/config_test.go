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
	return w.header() + w.imageResource("bench", image) + networkingResource +
		w.nodesResource(prefix, count, "windows_golden_image.bench.template_path", "windows_node_networking.bench.id", extra)
}

// baseConfig is what pools and nodes are made from, in a configuration of
// its own: golden images (resources "img0", "img1", ... named images[i])
// and the flannel networking, with outputs template_<i> and networking_id.
// The configurations of the nodes then name the template by its path, so
// their applies, refreshes and destroys count the nodes' work alone.
func (w *world) baseConfig(images ...string) string {
	var b strings.Builder
	b.WriteString(w.header())
	for i, name := range images {
		b.WriteString(w.imageResource(fmt.Sprintf("img%d", i), name))
		fmt.Fprintf(&b, "\noutput \"template_%d\" {\n  value = windows_golden_image.img%d.template_path\n}\n", i, i)
	}
	b.WriteString(networkingResource)
	b.WriteString("\noutput \"networking_id\" {\n  value = windows_node_networking.bench.id\n}\n")
	return b.String()
}

// countConfig is count windows_node named <prefix>-<index>, made from
// template (an inventory path) with the networking networkingID.
func (w *world) countConfig(prefix string, count int, template, networkingID, extra string) string {
	return w.header() + w.nodesResource(prefix, count, fmt.Sprintf("%q", template), fmt.Sprintf("%q", networkingID), extra)
}

// poolConfig is a windows_node_pool "p" of replicas members named
// <prefix>-<5 characters>, made from template (an inventory path) with the
// networking networkingID, placed as countConfig places its nodes; extra
// adds attributes (max_parallel, max_surge, ...).
func (w *world) poolConfig(prefix string, replicas int, template, networkingID, extra string) string {
	sb := w.sb
	vc := sb.VSphere
	return w.header() + fmt.Sprintf(`
resource "windows_node_pool" "p" {
  name_prefix       = %q
  replicas          = %d
  template          = %q
  folder            = "/DC0/vm/windows"
  resource_pool_id  = %q
  network_id        = %q
  admin_password_wo = %q
  transport         = local.transport
  networking_id     = %q
%s
}
`, prefix, replicas, template, vc.ResourcePoolID, vc.NetworkID, sb.AdminPassword, networkingID, extra)
}

// header is the provider's requirements and configuration (from the
// environment) and the transport every resource uses.
func (w *world) header() string {
	return fmt.Sprintf(`terraform {
  required_providers {
    windows = {
      source  = "%s/windows"
      version = "%s"
    }
  }
}

provider "windows" {} # VSPHERE_*, KUBE_CONFIG_PATH

# windows_node_networking is installed once, with an administrator's
# identity (guide "Least privilege"): the sandbox's admin kubeconfig.
provider "windows" {
  alias = "admin"
  kubernetes {
    config_path = %q
  }
}

# WinRM on the stock templates' HTTP listener (NTLM, sealed messages): the
# sandbox's guests have no HTTPS listener, and the runner is in their subnet.
locals {
  transport = {
    type  = "winrm"
    https = false
    port  = %d
  }
}
`, providerNamespace, providerVersion, w.sb.Kubeconfig, w.sb.Hosts.Ports().WinRM)
}

// imageResource is a windows_golden_image of the sandbox's 2022 template.
func (w *world) imageResource(label, name string) string {
	sb := w.sb
	a := sb.Artifacts
	vc := sb.VSphere
	return fmt.Sprintf(`
resource "windows_golden_image" %q {
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
  kube_log_runner_sha256 = %q
  network_artifacts      = %s
}
`, label, name, vc.Templates["2022"], vc.ResourcePoolID, vc.DatastoreID, vc.NetworkID, sb.AdminPassword,
		artifacts.KubernetesVersion, a.BaseURL, a.Kubelet.SHA256, a.KubeProxy.SHA256, a.Containerd.URL, a.Containerd.SHA256,
		a.CNIPlugins.URL, a.CNIPlugins.SHA256,
		a.KubeLogRunner.SHA256, a.NetworkArtifactsHCL())
}

// networkingResource: nodes turn Ready only with a network plugin, flannel's
// agents as HostProcess pods.
const networkingResource = `
resource "windows_node_networking" "bench" {
  provider                 = windows.admin
  cni                      = "flannel"
  allow_destroy_with_nodes = true
}
`

// nodesResource is count windows_node "n" named <prefix>-<index>; template
// and networking are expressions.
func (w *world) nodesResource(prefix string, count int, template, networking, extra string) string {
	sb := w.sb
	vc := sb.VSphere
	return fmt.Sprintf(`
resource "windows_node" "n" {
  count             = %d
  name              = "%s-${count.index}"
  template          = %s
  folder            = "/DC0/vm/windows"
  resource_pool_id  = %q
  network_id        = %q
  admin_password_wo = %q
  transport         = local.transport
  networking_id     = %s
%s
}
`, count, prefix, template, vc.ResourcePoolID, vc.NetworkID, sb.AdminPassword, networking, extra)
}

# The quickstart: what `make demo` applies against the sandbox.
#
# The provider reads its settings from the environment (VSPHERE_*, KUBECONFIG),
# and the inputs below from TF_VAR_* (variables.tf), all of which
# `go run ./cmd/sandbox --env-file sandbox.env` writes for the sandbox.
#
# Two Kubernetes identities (guide "Least privilege"): the everyday one
# (KUBECONFIG, bound by examples/rbac) builds images and joins nodes; a
# cluster administrator's (var.admin_kubeconfig) installs, once per cluster,
# the networking agents and the RuntimeClasses.
terraform {
  required_version = ">= 1.11" # write-only attributes (admin_password_wo)

  required_providers {
    windows = {
      source  = "wincluster/windows"
      version = "~> 0.1.0"
    }
  }
}

provider "windows" {}

provider "windows" {
  alias = "admin"
  kubernetes {
    config_path = var.admin_kubeconfig
  }
}

# A Kubernetes-ready Windows Server 2022 template: containerd 2.2, kubelet,
# kube-log-runner, kube-proxy, flanneld and the CNI plugins (win-overlay,
# host-local, flannel) installed and verified, the HostProcess base image
# prepulled, generalized with sysprep. Nodes are cloned from it.
resource "windows_golden_image" "ltsc2022" {
  name             = "win2022-k8s"
  folder           = var.golden_image_folder
  source_template  = var.source_template_2022
  resource_pool_id = var.resource_pool_id
  datastore_id     = var.datastore_id
  network_id       = var.network_id

  admin_password_wo = var.admin_password

  # No transport block: the default, vmtools, runs every step through
  # vCenter's guest operations (VMware Tools). A stock template needs no
  # listener, certificate or route from here to the guest.

  kubernetes_version = var.kubernetes_version
  artifacts_base_url = var.artifacts_base_url
  kubelet_sha256     = var.kubelet_sha256
  kube_proxy_sha256  = var.kube_proxy_sha256
  containerd_url     = var.containerd_url
  containerd_sha256  = var.containerd_sha256
  cni_plugins_url    = var.cni_plugins_url
  cni_plugins_sha256 = var.cni_plugins_sha256

  kube_log_runner_sha256 = var.kube_log_runner_sha256
  # The programs of the networking mode var.cni selects (the others null).
  network_artifacts = {
    flannel = var.cni != "flannel" ? null : {
      flanneld   = { url = var.flanneld_url, sha256 = var.flanneld_sha256 }
      cni_plugin = { url = var.flannel_cni_plugin_url, sha256 = var.flannel_cni_plugin_sha256 }
    }
    calico = var.cni != "calico" ? null : {
      windows_archive = { url = var.calico_windows_archive_url, sha256 = var.calico_windows_archive_sha256 }
    }
  }

  lifecycle {
    # The build reads the real Windows build back from the guest.
    postcondition {
      condition     = self.windows_build == provider::windows::build_number("2022")
      error_message = "The source template is not Windows Server 2022 (the guest reports ${self.windows_build_full})."
    }
  }
}

# One RuntimeClass per Windows Server release the cluster runs. Pods set
# `runtimeClassName: windows-2022` and land on Windows Server 2022 nodes only.
resource "windows_runtime_class" "ltsc2019" {
  provider = windows.admin

  name            = "windows-2019"
  windows_version = "2019"
}

resource "windows_runtime_class" "ltsc2022" {
  provider = windows.admin

  name          = "windows-2022"
  windows_build = windows_golden_image.ltsc2022.windows_build # what the image's nodes will report
}

# The cluster-level pieces the Windows nodes need, once per cluster. With
# flannel (the default): kube-proxy and flanneld as HostProcess DaemonSets,
# each with a ServiceAccount of its own (never the node's credentials), on
# flannel's VXLAN overlay (VNI 4096, port 4789; the plan checks that the
# cluster's flannel uses them). With calico: calico-node-windows and
# kube-proxy, joining the cluster's own Calico (VXLAN, Calico IPAM with strict
# affinity; the plan checks them).
resource "windows_node_networking" "this" {
  provider = windows.admin

  cni = var.cni
}

# Two Windows workers cloned from the image. Each joins with a short-lived
# bootstrap token; the cluster's API endpoint, CA, DNS service IP and CIDRs
# are discovered, never typed in. The plan first runs the cluster readiness
# checks (see data.windows_cluster) and stops on a failing one.
resource "windows_node" "worker" {
  count = 2

  name              = "win-${count.index}"
  template          = windows_golden_image.ltsc2022.template_path
  folder            = var.folder
  resource_pool_id  = var.resource_pool_id
  network_id        = var.network_id
  admin_password_wo = var.admin_password

  # Orders Terraform (networking first, nodes destroyed first) and makes
  # create wait until kube-proxy and flannel run on the node.
  networking_id = windows_node_networking.this.id

  labels = {
    "example.com/pool" = "web"
  }
}

# What a Windows node needs of the cluster, and the checks windows_node runs
# (read after the nodes exist, so the node checks see them).
data "windows_cluster" "this" {
  kubernetes_version = var.kubernetes_version
  windows_build      = provider::windows::build_number("2022")

  depends_on = [windows_node.worker]
}

output "golden_image" {
  description = "The template windows_node clones, and what is in it."
  value = {
    template_path      = windows_golden_image.ltsc2022.template_path
    template_id        = windows_golden_image.ltsc2022.template_id
    windows_version    = windows_golden_image.ltsc2022.windows_version
    windows_build_full = windows_golden_image.ltsc2022.windows_build_full
    kubernetes_version = windows_golden_image.ltsc2022.kubernetes_version
    containerd_version = windows_golden_image.ltsc2022.containerd_version
    artifacts          = { for a in jsondecode(windows_golden_image.ltsc2022.manifest) : a.name => a.sha256 }
  }
}

output "runtime_classes" {
  description = "RuntimeClass name => Windows build it selects."
  value = {
    for rc in [windows_runtime_class.ltsc2019, windows_runtime_class.ltsc2022] : rc.name => rc.windows_build
  }
}

output "nodes" {
  description = "Node name => IP, Windows build, kubelet version and providerID."
  value = {
    for n in windows_node.worker : n.name => {
      ip          = n.ip_address
      build       = n.windows_build
      kubelet     = n.kubelet_version
      provider_id = n.provider_id
      ready       = n.ready
    }
  }
}

output "node_networking" {
  description = "The Kubernetes objects that run the node agents. (Their readiness, the resource's agents attribute, changes as nodes join: an output of it would show in every plan.)"
  value       = windows_node_networking.this.objects
}

output "cluster" {
  description = "What windows_node discovered, and the readiness checks."
  value = {
    dns_service_ip = data.windows_cluster.this.dns_service_ip
    service_cidrs  = data.windows_cluster.this.service_cidrs
    cluster_cidrs  = data.windows_cluster.this.cluster_cidrs
    ready          = data.windows_cluster.this.ready
    checks         = { for c in data.windows_cluster.this.checks : c.id => c.status }
  }
}

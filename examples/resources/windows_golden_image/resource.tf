# A Windows Server 2022 image for Kubernetes v1.36.3, built in vSphere and
# placed with the vmware/vsphere provider's data sources.
data "vsphere_datacenter" "dc" {
  name = "dc1"
}

data "vsphere_compute_cluster" "cluster" {
  name          = "cluster1"
  datacenter_id = data.vsphere_datacenter.dc.id
}

data "vsphere_datastore" "ds" {
  name          = "vsanDatastore"
  datacenter_id = data.vsphere_datacenter.dc.id
}

data "vsphere_network" "build" {
  name          = "VM Network"
  datacenter_id = data.vsphere_datacenter.dc.id
}

variable "admin_password" {
  type      = string
  sensitive = true
  ephemeral = true
}

# The checksums published with each release, for example
# https://dl.k8s.io/release/v1.36.3/bin/windows/amd64/kubelet.exe.sha256
variable "sha256" {
  description = "SHA-256 of kubelet, kube_proxy, kube_log_runner, containerd, cni_plugins, flanneld and flannel_cni_plugin."
  type        = map(string)
}

resource "windows_golden_image" "ltsc2022" {
  name             = "win2022-k8s-v1.36.3"
  folder           = "/dc1/vm/templates"
  source_template  = "/dc1/vm/templates/win2022-base" # stock: VMware Tools and the Administrator password
  resource_pool_id = data.vsphere_compute_cluster.cluster.resource_pool_id
  datastore_id     = data.vsphere_datastore.ds.id
  network_id       = data.vsphere_network.build.id

  admin_password_wo         = var.admin_password
  admin_password_wo_version = 1

  # No transport: the default (vmtools) goes through vCenter's guest
  # operations, so the template needs no listener or certificate.

  kubernetes_version     = "v1.36.3" # kubelet and kube-proxy from https://dl.k8s.io/release
  kubelet_sha256         = var.sha256["kubelet"]
  kube_proxy_sha256      = var.sha256["kube_proxy"]
  kube_log_runner_sha256 = var.sha256["kube_log_runner"]
  containerd_url         = "https://github.com/containerd/containerd/releases/download/v2.2.7/containerd-2.2.7-windows-amd64.tar.gz"
  containerd_sha256      = var.sha256["containerd"]
  cni_plugins_url        = "https://github.com/containernetworking/plugins/releases/download/v1.9.1/cni-plugins-windows-amd64-v1.9.1.tgz"
  cni_plugins_sha256     = var.sha256["cni_plugins"]

  # For windows_node_networking with cni = "flannel".
  network_artifacts = {
    flannel = {
      flanneld = {
        url    = "https://github.com/flannel-io/flannel/releases/download/v0.28.9/flanneld.exe"
        sha256 = var.sha256["flanneld"]
      }
      cni_plugin = {
        url    = "https://github.com/flannel-io/cni-plugin/releases/download/v1.9.1-flannel1/cni-plugin-flannel-windows-amd64-v1.9.1-flannel1.tgz"
        sha256 = var.sha256["flannel_cni_plugin"]
      }
    }
  }

  prepull_images     = ["mcr.microsoft.com/windows/nanoserver:ltsc2022"]
  ssh_authorized_key = file("~/.ssh/id_ed25519.pub")
  time_zone          = "W. Europe Standard Time"

  timeouts {
    create = "90m"
  }
}

# Pods with runtimeClassName: windows-2022 go to nodes of this image's build.
resource "windows_runtime_class" "ltsc2022" {
  provider = windows.admin

  name          = "windows-2022"
  windows_build = windows_golden_image.ltsc2022.windows_build
}

# Installed once per cluster, with a cluster administrator's identity (guide
# "Least privilege"): a provider configuration of its own, by alias. The
# default configuration keeps the everyday identity of examples/rbac.
provider "windows" {
  alias = "admin"
  kubernetes {
    config_path = "~/.kube/admin.conf"
  }
}

# Composed with the providers a vSphere + Kubernetes site already runs:
# vmware/vsphere's data sources look the placement up, this provider
# builds the image and joins the nodes, and hashicorp/kubernetes runs a
# Windows workload on them through the RuntimeClass.
#
# Written against vmware/vsphere v2.16.1 (its data sources' attributes
# read in its source) and hashicorp/kubernetes 3.x (kubernetes_deployment_v1);
# see docs/guides/compose-with-vsphere-provider.md for what was validated and
# how. Every windows_* attribute below takes the data sources' values as they
# hand them out: managed object ids, UUIDs, absolute or relative paths.
terraform {
  required_version = ">= 1.11" # write-only attributes (admin_password_wo)

  required_providers {
    windows = {
      source = "wincluster/windows"
    }
    vsphere = {
      source  = "vmware/vsphere"
      version = "~> 2.16"
    }
    kubernetes = {
      source  = "hashicorp/kubernetes"
      version = "~> 3.0"
    }
  }
}

provider "windows" {} # VSPHERE_*, KUBECONFIG from the environment

# Installed once per cluster, with a cluster administrator's identity (guide
# "Least privilege"): a provider configuration of its own, by alias. The
# default configuration keeps the everyday identity of examples/rbac.
provider "windows" {
  alias = "admin"
  kubernetes {
    config_path = "~/.kube/admin.conf"
  }
}

provider "vsphere" {} # VSPHERE_SERVER, VSPHERE_USER, VSPHERE_PASSWORD from the environment

provider "kubernetes" {
  config_path = var.kubeconfig
}

variable "kubeconfig" {
  type = string
}

variable "admin_password" {
  type      = string
  sensitive = true
}

# The published SHA-256 of each download: see "Getting the checksums" in
# docs/resources/golden_image.md.
variable "sha256" {
  description = "SHA-256 of kubelet, kube_proxy, kube_log_runner, containerd, cni_plugins, flanneld and flannel_cni_plugin."
  type        = map(string)
}

data "vsphere_datacenter" "dc" {
  name = "DC0"
}

data "vsphere_compute_cluster" "cluster" {
  name          = "DC0_C0"
  datacenter_id = data.vsphere_datacenter.dc.id
}

data "vsphere_datastore" "ds" {
  name          = "LocalDS_0"
  datacenter_id = data.vsphere_datacenter.dc.id
}

data "vsphere_network" "nodes" {
  name          = "VM Network"
  datacenter_id = data.vsphere_datacenter.dc.id
}

data "vsphere_folder" "nodes" {
  path = "/DC0/vm/windows"
}

# The base template, by its path below the datacenter's VM folder.
data "vsphere_virtual_machine" "base" {
  name          = "templates/win2022-base"
  datacenter_id = data.vsphere_datacenter.dc.id
}

resource "windows_golden_image" "ltsc2022" {
  name_prefix       = "win2022-k8s-"
  folder            = data.vsphere_virtual_machine.base.folder # "/DC0/vm/templates"
  source_template   = data.vsphere_virtual_machine.base.id     # its BIOS UUID
  resource_pool_id  = data.vsphere_compute_cluster.cluster.resource_pool_id
  datastore_id      = data.vsphere_datastore.ds.id
  network_id        = data.vsphere_network.nodes.id
  admin_password_wo = var.admin_password

  kubernetes_version     = "v1.36.3"
  kubelet_sha256         = var.sha256["kubelet"]
  kube_proxy_sha256      = var.sha256["kube_proxy"]
  kube_log_runner_sha256 = var.sha256["kube_log_runner"]
  containerd_url         = "https://github.com/containerd/containerd/releases/download/v2.2.7/containerd-2.2.7-windows-amd64.tar.gz"
  containerd_sha256      = var.sha256["containerd"]
  cni_plugins_url        = "https://github.com/containernetworking/plugins/releases/download/v1.9.1/cni-plugins-windows-amd64-v1.9.1.tgz"
  cni_plugins_sha256     = var.sha256["cni_plugins"]

  # windows_node_networking below runs flannel: the nodes need its binaries.
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

  lifecycle {
    create_before_destroy = true
  }
}

# The finished template read back, as another configuration would read it.
data "vsphere_virtual_machine" "golden" {
  moid = windows_golden_image.ltsc2022.template_id
}

resource "windows_node_networking" "this" {
  provider = windows.admin

  cni = "flannel"
}

resource "windows_node" "web" {
  count             = 2
  name              = "win-web-${count.index}"
  template          = data.vsphere_virtual_machine.golden.id # or .moid, .instance_uuid
  folder            = data.vsphere_folder.nodes.id           # "group-v..."
  resource_pool_id  = data.vsphere_compute_cluster.cluster.resource_pool_id
  network_id        = data.vsphere_network.nodes.id
  networking_id     = windows_node_networking.this.id
  admin_password_wo = var.admin_password
}

resource "windows_runtime_class" "ltsc2022" {
  provider = windows.admin

  name          = "windows-2022"
  windows_build = windows_golden_image.ltsc2022.windows_build
}

# A Windows workload: the RuntimeClass alone selects the Windows Server 2022
# nodes and tolerates their os=windows:NoSchedule taint.
resource "kubernetes_deployment_v1" "iis" {
  metadata {
    name = "iis"
  }
  spec {
    replicas = 2
    selector {
      match_labels = { app = "iis" }
    }
    template {
      metadata {
        labels = { app = "iis" }
      }
      spec {
        runtime_class_name = windows_runtime_class.ltsc2022.name
        container {
          name  = "iis"
          image = "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022"
          port {
            container_port = 80
          }
        }
      }
    }
  }

  depends_on = [windows_node.web]
}

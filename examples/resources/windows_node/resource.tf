# Three Windows Server 2022 workers from a golden image, with DHCP addresses,
# the default os=windows:NoSchedule taint and a label of their own.
resource "windows_node" "worker" {
  for_each = toset(["win-0", "win-1", "win-2"])

  name             = each.key # node name and computer name (15 characters at most)
  template         = var.template
  folder           = "/dc1/vm/k8s-windows"
  resource_pool_id = var.resource_pool_id
  network_id       = var.network_id
  num_cpus         = 4
  memory_mb        = 8192
  disk_size_gb     = 100

  admin_password_wo         = var.admin_password
  admin_password_wo_version = 1

  # No transport: the default (vmtools) goes through vCenter's guest operations.

  networking_id = windows_node_networking.this.id

  labels = {
    "example.com/pool" = "web"
  }

  timeouts {
    create = "45m"
    delete = "20m"
  }
}

# flannel's VXLAN overlay (VNI 4096 / port 4789) for the cluster's Windows
# nodes: kube-proxy and flanneld as HostProcess pods.
resource "windows_node_networking" "this" {
  provider = windows.admin

  cni = "flannel"
}

# A node with a static address on that network.
resource "windows_node" "static" {
  name              = "win-static"
  template          = var.template
  folder            = "/dc1/vm/k8s-windows"
  resource_pool_id  = var.resource_pool_id
  network_id        = var.network_id
  admin_password_wo = var.admin_password

  ipv4 = {
    address       = "10.0.0.21"
    prefix_length = 24
    gateway       = "10.0.0.1"
    dns_servers   = ["10.0.0.2"]
  }

  networking_id = windows_node_networking.this.id

  drain = {
    timeout              = "15m"
    delete_emptydir_data = true
  }
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

# Installed once per cluster, with a cluster administrator's identity (guide
# "Least privilege"): a provider configuration of its own, by alias. The
# default configuration keeps the everyday identity of examples/rbac.
provider "windows" {
  alias = "admin"
  kubernetes {
    config_path = "~/.kube/admin.conf"
  }
}

# flannel on Windows: kube-proxy and flanneld as HostProcess DaemonSets with
# ServiceAccounts of their own, on the cluster's VXLAN overlay (VNI 4096,
# port 4789, which the cluster's flannel must use too).
resource "windows_node_networking" "this" {
  provider = windows.admin

  cni = "flannel"
}

resource "windows_node" "worker" {
  count = 2

  name              = "win-${count.index}"
  template          = windows_golden_image.ltsc2022.template_path # with network_artifacts.flannel
  folder            = "/dc1/vm/k8s-windows"
  resource_pool_id  = data.vsphere_resource_pool.pool.id
  admin_password_wo = var.admin_password

  # Terraform creates the networking first and destroys the nodes first;
  # create returns once kube-proxy and flannel run on the node.
  networking_id = windows_node_networking.this.id
}

# Installed once per cluster, with a cluster administrator's identity (guide
# "Least privilege"): a provider configuration of its own, by alias. The
# default configuration keeps the everyday identity of examples/rbac.
provider "windows" {
  alias = "admin"
  kubernetes {
    config_path = "~/.kube/admin.conf"
  }
}

# The cluster runs Calico or Antrea, which install their own Windows agents
# (and kube-proxy, or its replacement): the provider installs nothing
# cluster-level, and nodes join with containerd, the CNI directories and the
# kubelet only.
resource "windows_node_networking" "calico" {
  provider = windows.admin

  cni = "none"
}

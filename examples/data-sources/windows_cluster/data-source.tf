# Check the cluster before building Windows nodes for it: the kubelet
# version and Windows build about to be installed, plus everything the
# cluster itself must provide (node pod CIDRs, flannel VXLAN VNI 4096 /
# port 4789, Linux DaemonSets kept off Windows, room on the Linux nodes).
data "windows_cluster" "this" {
  kubernetes_version = "v1.36.3"
  windows_build      = "10.0.20348" # e.g. windows_golden_image.ltsc2022.windows_build

  # Opt out of checks you have handled another way.
  skip_checks = ["linux-daemonset:monitoring/node-exporter"]
}

# Stop the plan, with each failing check's message and remedy, before
# anything is built.
resource "windows_runtime_class" "ltsc2022" {
  provider = windows.admin

  name          = "windows-2022"
  windows_build = "10.0.20348"

  lifecycle {
    precondition {
      condition = data.windows_cluster.this.ready
      error_message = join("\n", [
        for c in data.windows_cluster.this.checks :
        "${c.id}: ${c.message} Fix: ${c.remedy}" if c.status == "fail"
      ])
    }
  }
}

# What a Windows node's kubelet and CNI need to know.
output "windows_join_settings" {
  value = {
    api_endpoint   = data.windows_cluster.this.api_endpoint
    service_cidrs  = data.windows_cluster.this.service_cidrs
    cluster_cidrs  = data.windows_cluster.this.cluster_cidrs
    dns_service_ip = data.windows_cluster.this.dns_service_ip
    cluster_domain = data.windows_cluster.this.cluster_domain
    cni            = data.windows_cluster.this.cni
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

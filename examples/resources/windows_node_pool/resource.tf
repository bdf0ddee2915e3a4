# Ten Windows Server 2022 workers made from one golden image, spread over two
# failure domains, replaced one at a time (a new member Ready with its
# networking agents before an old one is drained) when what they are made of
# changes.
resource "windows_node_networking" "this" {
  provider = windows.admin

  cni = "flannel"
}

resource "windows_node_pool" "web" {
  name_prefix = "web" # members are web-xxxxx: 15 characters at most, a Windows computer name
  replicas    = 10

  template      = windows_golden_image.ltsc2022.template_path
  folder        = "/dc1/vm/k8s-windows"
  network_id    = var.network_id
  networking_id = windows_node_networking.this.id
  num_cpus      = 4
  memory_mb     = 8192

  # Each new member goes to the domain with the fewest members.
  resource_pool_id = var.resource_pool_id
  failure_domains = [
    { name = "rack-a", resource_pool_id = var.rack_a_pool_id, datastore_id = var.rack_a_datastore_id },
    { name = "rack-b", resource_pool_id = var.rack_b_pool_id, datastore_id = var.rack_b_datastore_id },
  ]

  admin_password_wo         = var.admin_password
  admin_password_wo_version = 1

  labels = {
    "example.com/tier" = "web"
  }

  max_parallel    = 10 # creates at once, whatever terraform -parallelism says
  max_surge       = 2  # two new members at a time during a roll
  max_unavailable = 0  # never below 10 Ready members

  replace_unhealthy_after = "15m" # a member NotReady this long is replaced on the next apply

  timeouts {
    update = "3h"
  }
}

# Every member, for other resources and outputs.
output "web_nodes" {
  value = { for m in windows_node_pool.web.members : m.name => m.ip_address }
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

# Installed once per cluster, with a cluster administrator's identity (guide
# "Least privilege"): a provider configuration of its own, by alias. The
# default configuration keeps the everyday identity of examples/rbac.
provider "windows" {
  alias = "admin"
  kubernetes {
    config_path = "~/.kube/admin.conf"
  }
}

# Windows Server 2022 nodes, with the default handler and toleration.
resource "windows_runtime_class" "ltsc2022" {
  provider = windows.admin

  name            = "windows-2022"
  windows_version = "2022"
}

# The build straight from a golden image, extra selector entries, custom
# tolerations and pod overhead.
resource "windows_runtime_class" "web" {
  provider = windows.admin

  name          = "windows-web"
  windows_build = "10.0.17763" # e.g. windows_golden_image.ltsc2019.windows_build
  node_selector = {
    "example.com/pool" = "web"
  }
  tolerations = [
    { key = "os", value = "windows", effect = "NoSchedule" },
    { key = "example.com/dedicated", operator = "Exists" },
  ]
  overhead = {
    cpu    = "100m"
    memory = "128Mi"
  }
}

# Windows Server 2022 nodes, with the default handler and toleration.
resource "windows_runtime_class" "ltsc2022" {
  name            = "windows-2022"
  windows_version = "2022"
}

# The build straight from a golden image, extra selector entries, custom
# tolerations and pod overhead.
resource "windows_runtime_class" "web" {
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

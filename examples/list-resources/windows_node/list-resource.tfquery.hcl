# nodes.tfquery.hcl: terraform query -generate-config-out=nodes.tf writes an
# import block (by identity) and a resource block for every Windows node found.
list "windows_node" "existing" {
  provider         = windows
  include_resource = true # the state an import yields, from which the configuration is written

  config {
    folder = "/dc1/vm/k8s-windows" # omit to search the whole inventory
  }
}

# Also the clones of a golden image whose Node is gone (or that never joined).
list "windows_node" "unjoined" {
  provider = windows

  config {
    name_prefix      = "win-"
    include_unjoined = true
  }
}

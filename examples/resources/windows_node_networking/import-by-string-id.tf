import {
  to       = windows_node_networking.this
  provider = windows.admin
  id       = "kube-system" # the namespace of the agents' objects
}

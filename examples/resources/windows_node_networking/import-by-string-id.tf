import {
  to = windows_node_networking.this
  id = "kube-system" # the namespace of the agents' objects
}

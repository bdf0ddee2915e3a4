import {
  to = windows_node_networking.this
  identity = {
    namespace = "kube-system"
  }
}

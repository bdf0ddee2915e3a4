# The VM's inventory path, its instance UUID, or the Node's providerID.
import {
  to = windows_node.worker["win-0"]
  id = "/dc1/vm/k8s-windows/win-0"
}

import {
  to = windows_node.static
  id = "vsphere://4211c6e1-2f0d-8a3b-5e7c-90d1a2b3c4d5"
}

# A node is imported by its VM's inventory path, or by the VM's instance UUID.
terraform import 'windows_node.worker[0]' /dc1/vm/k8s-windows/win-0
terraform import windows_node.static 5021a7c3-8f4e-4b0a-9d2e-6f1c3b7a9e10

# A node is imported by its VM's inventory path, the VM's instance UUID, or the
# Node's providerID, vsphere://<BIOS UUID> (kubectl get node <name> -o
# jsonpath='{.spec.providerID}'), set by this provider or the vSphere cloud provider.
terraform import 'windows_node.worker[0]' /dc1/vm/k8s-windows/win-0
terraform import windows_node.static 5021a7c3-8f4e-4b0a-9d2e-6f1c3b7a9e10
terraform import windows_node.joined_by_hand vsphere://4211c6e1-2f0d-8a3b-5e7c-90d1a2b3c4d5

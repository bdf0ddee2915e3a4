# With every setting in the environment (VSPHERE_SERVER, VSPHERE_USER,
# VSPHERE_PASSWORD, VSPHERE_CA_FILE, KUBECONFIG or KUBE_HOST/KUBE_TOKEN/...),
# as in Terraform Cloud workspaces, the block stays empty.
provider "windows" {}

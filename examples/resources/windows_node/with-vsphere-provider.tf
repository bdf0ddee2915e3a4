# Composed with the vmware/vsphere provider (written against v2.16.1): its
# data sources look up the placement, windows_node takes their values as they
# hand them out (see the guide "Compose with the vSphere and Kubernetes
# providers" for every accepted form).
data "vsphere_datacenter" "dc" {
  name = "dc1"
}

data "vsphere_compute_cluster" "cluster" {
  name          = "cluster1"
  datacenter_id = data.vsphere_datacenter.dc.id
}

data "vsphere_datastore" "ds" {
  name          = "vsanDatastore"
  datacenter_id = data.vsphere_datacenter.dc.id
}

data "vsphere_network" "pods" {
  name          = "k8s-nodes"
  datacenter_id = data.vsphere_datacenter.dc.id
}

data "vsphere_folder" "k8s" {
  path = "/dc1/vm/k8s-windows"
}

resource "windows_node" "composed" {
  name              = "win-composed"
  template          = windows_golden_image.ltsc2022.template_id
  folder            = data.vsphere_folder.k8s.id
  resource_pool_id  = data.vsphere_compute_cluster.cluster.resource_pool_id
  datastore_id      = data.vsphere_datastore.ds.id
  network_id        = data.vsphere_network.pods.id
  admin_password_wo = var.admin_password
}

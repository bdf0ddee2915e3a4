# Rolling out a new image (a Kubernetes patch release, a new containerd, the
# month's updates in the base template) without a gap in capacity. The image
# takes its name from name_prefix and the nodes theirs from the template, so
# old and new exist side by side, and create_before_destroy on both orders a
# change of kubernetes_version as:
#   1. the new template is built; the old one and the nodes stay as they are;
#   2. new nodes are cloned from it and join the cluster;
#   3. the old nodes are drained (PodDisruptionBudgets honoured) and deleted;
#   4. the old template is deleted.
# A failed build stops at 1 and a node that does not join stops at 2: the old
# nodes keep running. (Placement, variables and checksums as in the example
# above.)
resource "windows_golden_image" "workers" {
  name_prefix      = "win2022-k8s-"
  folder           = "/dc1/vm/templates"
  source_template  = "/dc1/vm/templates/win2022-base"
  resource_pool_id = data.vsphere_compute_cluster.cluster.resource_pool_id

  admin_password_wo = var.admin_password

  kubernetes_version     = var.kubernetes_version
  kubelet_sha256         = var.sha256["kubelet"]
  kube_proxy_sha256      = var.sha256["kube_proxy"]
  kube_log_runner_sha256 = var.sha256["kube_log_runner"]
  containerd_url         = var.containerd_url
  containerd_sha256      = var.sha256["containerd"]
  cni_plugins_url        = var.cni_plugins_url
  cni_plugins_sha256     = var.sha256["cni_plugins"]

  lifecycle {
    create_before_destroy = true
  }
}

resource "windows_node" "worker" {
  count = 3

  # win0-1234, win1-1234, ...: unique per template (its managed object id),
  # so a new node never waits for the name of the one it replaces.
  name              = "win${count.index}-${trimprefix(windows_golden_image.workers.template_id, "vm-")}"
  template          = windows_golden_image.workers.template_path
  folder            = "/dc1/vm/windows"
  resource_pool_id  = data.vsphere_compute_cluster.cluster.resource_pool_id
  admin_password_wo = var.admin_password

  lifecycle {
    # Without it Terraform deletes the old nodes first, before the new
    # image is even built.
    create_before_destroy = true
  }
}

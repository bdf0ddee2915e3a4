# Rolling a new golden image through a pool: build the new template next to
# the old one (name_prefix and create_before_destroy on the image), point the
# pool at it, apply. The pool replaces its members max_surge at a time; the
# old template is deleted only once no member uses it any more. (Variables
# and checksums as in the golden image's examples.)
resource "windows_golden_image" "ltsc2022" {
  name_prefix       = "win2022-k8s-"
  source_template   = "/dc1/vm/templates/win2022-base"
  folder            = "/dc1/vm/templates"
  resource_pool_id  = var.resource_pool_id
  admin_password_wo = var.admin_password

  kubernetes_version     = "v1.36.3" # the new version: a new image, then a roll
  kubelet_sha256         = var.sha256["kubelet"]
  kube_proxy_sha256      = var.sha256["kube_proxy"]
  kube_log_runner_sha256 = var.sha256["kube_log_runner"]
  containerd_url         = "https://github.com/containerd/containerd/releases/download/v2.2.7/containerd-2.2.7-windows-amd64.tar.gz"
  containerd_sha256      = var.sha256["containerd"]
  cni_plugins_url        = "https://github.com/containernetworking/plugins/releases/download/v1.9.1/cni-plugins-windows-amd64-v1.9.1.tgz"
  cni_plugins_sha256     = var.sha256["cni_plugins"]

  lifecycle {
    create_before_destroy = true
  }
}

resource "windows_node_pool" "rolling" {
  name_prefix       = "web"
  replicas          = 10
  template          = windows_golden_image.ltsc2022.template_path
  folder            = "/dc1/vm/k8s-windows"
  resource_pool_id  = var.resource_pool_id
  admin_password_wo = var.admin_password

  max_surge       = 2
  max_unavailable = 0
}

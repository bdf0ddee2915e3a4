# A site whose nodes pull every image through its private registry mirror,
# which wants a credential. The pause image, the networking agents'
# HostProcess images and the pods' images all go through it; set
# windows_node_networking.host_process_image to the reference the mirror
# carries.
variable "registry_password" {
  type      = string
  sensitive = true
}

resource "windows_golden_image" "mirrored" {
  name             = "win2022-k8s-mirrored"
  folder           = "/dc1/vm/templates"
  source_template  = "/dc1/vm/templates/win2022-base"
  resource_pool_id = data.vsphere_compute_cluster.cluster.resource_pool_id

  admin_password_wo = var.admin_password

  kubernetes_version     = "v1.36.3"
  kubelet_sha256         = var.sha256["kubelet"]
  kube_proxy_sha256      = var.sha256["kube_proxy"]
  kube_log_runner_sha256 = var.sha256["kube_log_runner"]
  containerd_url         = "https://github.com/containerd/containerd/releases/download/v2.2.7/containerd-2.2.7-windows-amd64.tar.gz"
  containerd_sha256      = var.sha256["containerd"]
  cni_plugins_url        = "https://github.com/containernetworking/plugins/releases/download/v1.9.1/cni-plugins-windows-amd64-v1.9.1.tgz"
  cni_plugins_sha256     = var.sha256["cni_plugins"]

  # One hosts.toml per upstream registry: the mirror first, then (without
  # server) the upstream registry itself.
  registry_mirrors = {
    "registry.k8s.io"   = { endpoints = ["https://mirror.example.internal"] }
    "mcr.microsoft.com" = { endpoints = ["https://mirror.example.internal"] }
  }
  # Write-only: never in the state. Bump the version to rebuild with a new
  # password.
  registry_credentials_wo = {
    "mirror.example.internal" = { username = "k8s-nodes", password = var.registry_password }
  }
  registry_credentials_wo_version = 1

  # Pulled through the mirror at build time (ctr --hosts-dir).
  prepull_images = ["mcr.microsoft.com/oss/kubernetes/windows-host-process-containers-base-image:v1.0.0"]
}

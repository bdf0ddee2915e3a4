# An air-gapped site: every download comes from a local HTTP server, laid out
# like the upstream release location for kubelet and kube-proxy:
#   http://artifacts.example.internal/kubernetes/v1.36.3/bin/windows/amd64/kubelet.exe
#   http://artifacts.example.internal/kubernetes/v1.36.3/bin/windows/amd64/kube-proxy.exe
# and images from a local registry. Every file is still verified by SHA-256
# on the guest, wherever it comes from.
locals {
  artifacts = "http://artifacts.example.internal"
}

resource "windows_golden_image" "offline" {
  name             = "win2022-k8s-offline"
  folder           = "/dc1/vm/templates"
  source_template  = "/dc1/vm/templates/win2022-base"
  resource_pool_id = data.vsphere_compute_cluster.cluster.resource_pool_id

  admin_password_wo = var.admin_password

  kubernetes_version = "v1.36.3"
  artifacts_base_url = "${local.artifacts}/kubernetes"
  kubelet_sha256     = var.sha256["kubelet"]
  kube_proxy_sha256  = var.sha256["kube_proxy"]
  # kube-log-runner.exe from the same mirror layout as kubelet.exe.
  kube_log_runner_sha256 = var.sha256["kube_log_runner"]
  containerd_url         = "${local.artifacts}/containerd/containerd-2.2.7-windows-amd64.tar.gz"
  containerd_sha256      = var.sha256["containerd"]
  cni_plugins_url        = "${local.artifacts}/cni/cni-plugins-windows-amd64-v1.9.1.tgz"
  cni_plugins_sha256     = var.sha256["cni_plugins"]

  pause_image = "registry.example.internal/pause:3.10.2"
  # The node agents' HostProcess base image from the mirror too; set the
  # same image as windows_node_networking.host_process_image.
  prepull_images = [
    "registry.example.internal/oss/kubernetes/windows-host-process-containers-base-image:v1.0.0",
    "registry.example.internal/windows/nanoserver:ltsc2022",
  ]

  network_artifacts = {
    flannel = {
      flanneld   = { url = "${local.artifacts}/flannel/flanneld.exe", sha256 = var.sha256["flanneld"] }
      cni_plugin = { url = "${local.artifacts}/flannel/cni-plugin-flannel-windows-amd64-v1.9.1-flannel1.tgz", sha256 = var.sha256["flannel_cni_plugin"] }
    }
  }
}

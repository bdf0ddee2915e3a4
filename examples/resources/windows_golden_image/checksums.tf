# The SHA-256 inputs read from the checksum files the projects publish next
# to each download, with the hashicorp/http provider. This trusts dl.k8s.io
# and GitHub at every plan; to pin reviewed values instead, run it once and
# copy local.sha256 into a .tfvars file.
locals {
  kubernetes_version  = "v1.36.3"
  containerd_version  = "2.2.7"
  cni_plugins_version = "v1.9.1"

  kubernetes_bin  = "https://dl.k8s.io/release/${local.kubernetes_version}/bin/windows/amd64"
  containerd_url  = "https://github.com/containerd/containerd/releases/download/v${local.containerd_version}/containerd-${local.containerd_version}-windows-amd64.tar.gz"
  cni_plugins_url = "https://github.com/containernetworking/plugins/releases/download/${local.cni_plugins_version}/cni-plugins-windows-amd64-${local.cni_plugins_version}.tgz"
}

# dl.k8s.io publishes <binary>.sha256 beside every binary: the digest alone,
# for example https://dl.k8s.io/release/v1.36.3/bin/windows/amd64/kubelet.exe.sha256
data "http" "kubernetes_sha256" {
  for_each = toset(["kubelet", "kube-proxy", "kube-log-runner"])
  url      = "${local.kubernetes_bin}/${each.key}.exe.sha256"

  lifecycle {
    postcondition {
      condition     = self.status_code == 200
      error_message = "No checksum at ${self.url}: is ${local.kubernetes_version} a release?"
    }
  }
}

# containerd's releases carry <archive>.sha256sum and the CNI plugins'
# <archive>.sha256, in sha256sum's format: "<digest>  <file name>".
data "http" "containerd_sha256" {
  url = "${local.containerd_url}.sha256sum"
}

data "http" "cni_plugins_sha256" {
  url = "${local.cni_plugins_url}.sha256"
}

locals {
  sha256 = {
    kubelet         = trimspace(data.http.kubernetes_sha256["kubelet"].response_body)
    kube_proxy      = trimspace(data.http.kubernetes_sha256["kube-proxy"].response_body)
    kube_log_runner = trimspace(data.http.kubernetes_sha256["kube-log-runner"].response_body)
    containerd      = split(" ", trimspace(data.http.containerd_sha256.response_body))[0]
    cni_plugins     = split(" ", trimspace(data.http.cni_plugins_sha256.response_body))[0]
  }
}

resource "windows_golden_image" "checksummed" {
  name_prefix       = "win2022-k8s-"
  folder            = "/dc1/vm/templates"
  source_template   = "/dc1/vm/templates/win2022-base"
  resource_pool_id  = var.resource_pool_id
  admin_password_wo = var.admin_password

  kubernetes_version     = local.kubernetes_version
  kubelet_sha256         = local.sha256["kubelet"]
  kube_proxy_sha256      = local.sha256["kube_proxy"]
  kube_log_runner_sha256 = local.sha256["kube_log_runner"]
  containerd_url         = local.containerd_url
  containerd_sha256      = local.sha256["containerd"]
  cni_plugins_url        = local.cni_plugins_url
  cni_plugins_sha256     = local.sha256["cni_plugins"]

  lifecycle {
    create_before_destroy = true
  }
}

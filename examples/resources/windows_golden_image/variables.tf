# The inputs of the rollout and air-gapped examples (resource.tf declares
# admin_password and sha256).
variable "kubernetes_version" {
  type    = string
  default = "v1.36.3"
}

variable "containerd_url" {
  type    = string
  default = "https://github.com/containerd/containerd/releases/download/v2.2.7/containerd-2.2.7-windows-amd64.tar.gz"
}

variable "cni_plugins_url" {
  type    = string
  default = "https://github.com/containernetworking/plugins/releases/download/v1.9.1/cni-plugins-windows-amd64-v1.9.1.tgz"
}

variable "resource_pool_id" {
  type = string
}

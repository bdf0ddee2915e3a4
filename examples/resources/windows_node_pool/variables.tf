variable "resource_pool_id" {
  type = string
}

variable "network_id" {
  type = string
}

variable "rack_a_pool_id" {
  type = string
}

variable "rack_a_datastore_id" {
  type = string
}

variable "rack_b_pool_id" {
  type = string
}

variable "rack_b_datastore_id" {
  type = string
}

variable "admin_password" {
  type      = string
  sensitive = true
}

variable "sha256" {
  description = "SHA-256 of each download: kubelet, kube_proxy, kube_log_runner, containerd, cni_plugins."
  type        = map(string)
}

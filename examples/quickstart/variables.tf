# The quickstart's inputs. `make demo` (and `source build/sandbox.env`) set
# every one of them from the sandbox as TF_VAR_<name>; against a real vCenter,
# put them in a terraform.tfvars.

# A cluster administrator's kubeconfig (kubeadm's admin.conf, say), for what
# is installed once per cluster: windows_node_networking and the
# RuntimeClasses. Everything else runs as KUBECONFIG's everyday identity.
variable "admin_kubeconfig" {
  description = "Path of a cluster administrator's kubeconfig, for example `~/.kube/admin.conf`."
  type        = string
}

# Where the golden image build runs: managed object ids, as the
# vmware/vsphere data sources return them (data.vsphere_resource_pool.x.id).
variable "resource_pool_id" {
  description = "Resource pool of the build VM, for example `resgroup-8`."
  type        = string
}

variable "datastore_id" {
  description = "Datastore of the build VM and the template, for example `datastore-12`."
  type        = string
}

variable "network_id" {
  description = "Network of the build VM, for example `network-13`."
  type        = string
}

variable "folder" {
  description = "VM folder of the Windows nodes, for example `/dc1/vm/windows` (the least-privilege guide's `windows-nodes` role is granted on it)."
  type        = string
}

variable "golden_image_folder" {
  description = "VM folder of the golden image's build VM and template, for example `/dc1/vm/golden` (the least-privilege guide's `windows-golden-images` role is granted on it: marking a template and its snapshot are not a node's privileges)."
  type        = string
}

variable "source_template_2022" {
  description = "Base Windows Server 2022 template (stock: VMware Tools and the Administrator password), for example `/dc1/vm/templates/win2022-base`."
  type        = string
}

variable "admin_password" {
  description = "Administrator password of the base template; the golden image keeps it."
  type        = string
  sensitive   = true
  ephemeral   = true # only ever sent to the write-only admin_password_wo: never in plan or state
}

# What goes into the image. Every download is verified by SHA-256 on the guest.
variable "kubernetes_version" {
  description = "Kubernetes version of kubelet and kube-proxy."
  type        = string
  default     = "v1.36.3"
}

variable "artifacts_base_url" {
  description = "Where kubelet and kube-proxy are downloaded (`<base>/<version>/bin/windows/amd64/`): null for the upstream release location, a local HTTP server for air-gapped sites."
  type        = string
  default     = null
}

variable "kubelet_sha256" {
  description = "SHA-256 of kubelet.exe."
  type        = string
}

variable "kube_proxy_sha256" {
  description = "SHA-256 of kube-proxy.exe."
  type        = string
}

variable "containerd_url" {
  description = "URL of the containerd Windows release archive."
  type        = string
}

variable "containerd_sha256" {
  description = "SHA-256 of the containerd archive."
  type        = string
}

variable "cni_plugins_url" {
  description = "URL of the Windows CNI plugins archive."
  type        = string
}

variable "cni_plugins_sha256" {
  description = "SHA-256 of the CNI plugins archive."
  type        = string
}

variable "kube_log_runner_sha256" {
  description = "SHA-256 of kube-log-runner.exe of the same release (runs the kubelet service and keeps its log)."
  type        = string
}

# The cluster's network plugin, which the Windows nodes join: "flannel" or
# "calico" (the cluster's own Calico, VXLAN with Calico IPAM). Only the
# chosen mode's programs below are needed.
variable "cni" {
  description = "The networking mode of windows_node_networking: `flannel` or `calico`."
  type        = string
  default     = "flannel"

  validation {
    condition     = contains(["flannel", "calico"], var.cni)
    error_message = "cni must be \"flannel\" or \"calico\"."
  }
}

variable "calico_windows_archive_url" {
  description = "URL of calico-windows-<tag>.zip (projectcalico/calico release asset); needed with cni = \"calico\"."
  type        = string
  default     = null
}

variable "calico_windows_archive_sha256" {
  description = "SHA-256 of the Calico Windows archive; needed with cni = \"calico\"."
  type        = string
  default     = null
}

variable "flanneld_url" {
  description = "URL of flanneld.exe (flannel-io/flannel release asset)."
  type        = string
  default     = null # needed with cni = "flannel"
}

variable "flanneld_sha256" {
  description = "SHA-256 of flanneld.exe."
  type        = string
  default     = null # needed with cni = "flannel"
}

variable "flannel_cni_plugin_url" {
  description = "URL of cni-plugin-flannel-windows-amd64-<tag>.tgz (flannel-io/cni-plugin)."
  type        = string
  default     = null # needed with cni = "flannel"
}

variable "flannel_cni_plugin_sha256" {
  description = "SHA-256 of the flannel CNI plugin archive."
  type        = string
  default     = null # needed with cni = "flannel"
}

provider "windows" {
  vsphere {
    server   = "vcenter.example.com"
    user     = "terraform@vsphere.local"
    password = var.vsphere_password
    ca_file  = "/etc/ssl/vcenter-ca.pem" # or ca_certificate = "<PEM>"
  }

  kubernetes {
    config_path    = "~/.kube/config"
    config_context = "production"
  }
}

variable "vsphere_password" {
  type      = string
  sensitive = true
}

variable "template" {
  description = "The golden image's template_path, for example windows_golden_image.ltsc2022.template_path."
  type        = string
}

variable "resource_pool_id" {
  type = string
}

variable "network_id" {
  type = string
}

variable "admin_password" {
  type      = string
  sensitive = true
}

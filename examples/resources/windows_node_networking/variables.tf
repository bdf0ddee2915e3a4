variable "template" {
  description = "The golden image's template_path."
  type        = string
}

variable "resource_pool_id" {
  type = string
}

variable "admin_password" {
  type      = string
  sensitive = true
}

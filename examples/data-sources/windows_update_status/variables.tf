variable "image_template_id" {
  description = "The template_id of the windows_golden_image the nodes should run."
  type        = string
}

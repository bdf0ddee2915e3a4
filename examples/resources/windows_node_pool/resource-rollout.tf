# Rolling a new golden image through a pool: build the new template next to
# the old one (name_prefix and create_before_destroy on the image), point the
# pool at it, apply. The pool replaces its members max_surge at a time; the
# old template is deleted only once no member uses it any more.
resource "windows_golden_image" "ltsc2022" {
  name_prefix     = "win2022-k8s-"
  source_template = "/dc1/vm/templates/win2022-base"
  folder          = "/dc1/vm/templates"

  kubernetes_version = "v1.36.3" # the new version: a new image, then a roll
  # ... the rest of the image ...

  lifecycle {
    create_before_destroy = true
  }
}

resource "windows_node_pool" "web" {
  name_prefix = "web"
  replicas    = 10
  template    = windows_golden_image.ltsc2022.template_path
  # ... placement, credentials, networking as before ...

  max_surge       = 2
  max_unavailable = 0
}

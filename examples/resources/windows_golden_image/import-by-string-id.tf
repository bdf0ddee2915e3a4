import {
  to = windows_golden_image.ltsc2022
  id = "/dc1/vm/templates/win2022-k8s-v1.36.3" # or the managed object id, "vm-1042"
}

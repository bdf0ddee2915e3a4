# Import by identity: Terraform 1.12 or later, or OpenTofu 1.12 or later.
# The template's managed object id (the id attribute; govc ls -i <path> prints
# it as VirtualMachine:vm-1042).
import {
  to = windows_golden_image.ltsc2022
  identity = {
    id = "vm-1042"
  }
}

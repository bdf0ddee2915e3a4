# The template's managed object id (the id attribute; govc ls -i <path> prints it).
import {
  to = windows_golden_image.ltsc2022
  identity = {
    id = "vm-1042"
  }
}

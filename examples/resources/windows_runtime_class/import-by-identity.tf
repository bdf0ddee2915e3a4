# Import by identity: Terraform 1.12 or later, or OpenTofu 1.12 or later.
import {
  to       = windows_runtime_class.ltsc2022
  provider = windows.admin
  identity = {
    name = "windows-2022"
  }
}

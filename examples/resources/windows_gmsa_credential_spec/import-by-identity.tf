# Import by identity: Terraform 1.12 or later, or OpenTofu 1.12 or later.
import {
  to       = windows_gmsa_credential_spec.webapp01
  provider = windows.admin
  identity = {
    name = "webapp01"
  }
}

import {
  to       = windows_gmsa_credential_spec.webapp01
  provider = windows.admin
  id       = "webapp01" # the GMSACredentialSpec name
}

# A GMSACredentialSpec is imported by its name; Read finds the ServiceAccounts
# its role is bound to.
terraform import windows_gmsa_credential_spec.webapp01 webapp01

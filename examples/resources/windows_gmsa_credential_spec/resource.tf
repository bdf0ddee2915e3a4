# Applied with a cluster administrator's identity (guide "Least privilege"):
# it writes a ClusterRole granting `use` and binds it.
provider "windows" {
  alias = "admin"
  kubernetes {
    config_path = "~/.kube/admin.conf"
  }
}

# The gMSA WebApp01 of contoso.com, field for field from
# New-CredentialSpec -AccountName WebApp01 -Path webapp01.json
# (guide "gMSA for Windows pods"). Pods of the ServiceAccount web/iis may name
# it: securityContext.windowsOptions.gmsaCredentialSpecName = "webapp01".
resource "windows_gmsa_credential_spec" "webapp01" {
  provider = windows.admin

  name = "webapp01"
  domain_join_config = {
    sid                  = "S-1-5-21-702590844-1001920913-2680819671"
    machine_account_name = "WebApp01"
    guid                 = "56d9b66c-d746-4f87-bd26-26760cfdca2e"
    dns_tree_name        = "contoso.com"
    dns_name             = "contoso.com"
    netbios_name         = "CONTOSO"
  }
  group_managed_service_accounts = [
    { name = "WebApp01", scope = "contoso.com" },
    { name = "WebApp01", scope = "CONTOSO" },
  ]
  service_accounts = [
    { namespace = "web", name = "iis" },
  ]
}

# AKS with Microsoft Entra ID: kubelogin prints a token for the AKS AAD server
# application (6dae42f8-4368-4678-94ff-3960e28e3630, the same for every AKS
# cluster). --login azurecli uses the Azure CLI's login; --login spn a service
# principal from AAD_SERVICE_PRINCIPAL_CLIENT_ID and
# AAD_SERVICE_PRINCIPAL_CLIENT_SECRET (or AZURE_CLIENT_ID/AZURE_CLIENT_SECRET)
# in Terraform's environment.
provider "windows" {
  kubernetes {
    host                   = data.azurerm_kubernetes_cluster.this.kube_config[0].host
    cluster_ca_certificate = base64decode(data.azurerm_kubernetes_cluster.this.kube_config[0].cluster_ca_certificate)
    exec {
      api_version = "client.authentication.k8s.io/v1beta1"
      command     = "kubelogin"
      args        = ["get-token", "--login", "spn", "--server-id", "6dae42f8-4368-4678-94ff-3960e28e3630", "--tenant-id", var.tenant_id]
    }
  }
}

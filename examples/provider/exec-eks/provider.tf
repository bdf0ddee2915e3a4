# EKS: the AWS CLI prints a token for the cluster, valid for 15 minutes; the
# provider runs it again whenever the token it holds expires, so an apply may
# last longer. The AWS CLI takes its own credentials from Terraform's
# environment (AWS_PROFILE, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, ...).
provider "windows" {
  kubernetes {
    host                   = data.aws_eks_cluster.this.endpoint
    cluster_ca_certificate = base64decode(data.aws_eks_cluster.this.certificate_authority[0].data)
    exec {
      api_version = "client.authentication.k8s.io/v1beta1"
      command     = "aws"
      args        = ["eks", "get-token", "--cluster-name", data.aws_eks_cluster.this.name, "--region", "eu-west-1"]
    }
  }
}

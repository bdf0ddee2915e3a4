terraform {
  required_version = ">= 1.11"

  required_providers {
    windows = {
      source  = "wincluster/windows"
      version = "~> 0.1.0"
    }
  }
}

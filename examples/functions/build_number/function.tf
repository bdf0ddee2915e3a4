# A provider function needs its provider in required_providers.
terraform {
  required_providers {
    windows = {
      source  = "wincluster/windows"
      version = "~> 0.1.0"
    }
  }
}

locals {
  # "10.0.20348"
  ltsc2022 = provider::windows::build_number("2022")
}

//go:build depguardcanary

package kube

// A planted violation of depguard's terraform-stops-at-resources rule
// (.golangci.yml): `make lint` lints this file under its tag and fails
// unless depguard reports it. The tag is set nowhere else.
import _ "github.com/hashicorp/terraform-plugin-framework/types"

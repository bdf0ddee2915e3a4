//go:build depguardcanary

package vmtools

// A planted violation of depguard's simulated-world rule (.golangci.yml):
// `make lint` lints this file under its tag and fails unless depguard
// reports it. The tag is set nowhere else.
import _ "github.com/wincluster/terraform-provider-windows/internal/psquote"

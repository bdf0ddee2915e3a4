//go:build depguardcanary

package winnode

// A planted violation of depguard's provider-without-simulators rule
// (.golangci.yml): `make lint` lints this file under its tag and fails
// unless depguard reports it. The tag is set nowhere else.
import _ "github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"

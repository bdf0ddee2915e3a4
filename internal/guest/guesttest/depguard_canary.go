//go:build depguardcanary

package guesttest

// A planted violation of depguard's lower-layers-point-down rule
// (.golangci.yml): `make lint` lints this file under its tag and fails
// unless depguard reports it. (Most such imports would be a cycle the
// compiler refuses first; guesttest is imported by no orchestrator's
// non-test code, so this one is not.) The tag is set nowhere else.
import _ "github.com/wincluster/terraform-provider-windows/internal/goldenimage"

package bootstrap

import (
	"strings"
	"testing"
)

// TestSysprepStepDefaultTimeZone: a request without a time zone sets UTC,
// as its answer file says, never Set-TimeZone -Id ” (which Windows
// refuses: a build outside Terraform failed on it).
func TestSysprepStepDefaultTimeZone(t *testing.T) {
	step, err := SysprepStep(UnattendConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(step.Script, "-Id ''") || !strings.Contains(step.Script, "Set-TimeZone -Id 'UTC'") {
		t.Errorf("the sysprep step sets no time zone or an empty one:\n%s", step.Script)
	}
}

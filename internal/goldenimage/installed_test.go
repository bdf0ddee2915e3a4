package goldenimage

import (
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
)

// TestCheckInstalled: a listed package the guest does not list is named.
func TestCheckInstalled(t *testing.T) {
	updates := []bootstrap.WindowsUpdate{{KB: "KB5070010"}, {KB: "KB5070011"}}
	if err := checkInstalled(updates, []string{"KB5070010", "KB5070011", "KB5000001"}); err != nil {
		t.Errorf("all installed: %v", err)
	}
	err := checkInstalled(updates, []string{"KB5070010"})
	if err == nil || !strings.Contains(err.Error(), "update KB5070011 is not installed") || strings.Contains(err.Error(), "KB5070010 is not") {
		t.Errorf("KB5070011 missing: %v", err)
	}
}

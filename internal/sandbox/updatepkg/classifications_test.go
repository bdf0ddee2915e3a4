package updatepkg_test

import (
	"maps"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/updatepkg"
)

// TestClassificationsMatchTheProvider holds the simulated world's copy of
// the update classifications equal to the provider's: the simulated agent
// must answer the GUIDs the provider's search criteria name.
func TestClassificationsMatchTheProvider(t *testing.T) {
	if !maps.Equal(updatepkg.Classifications, bootstrap.UpdateClassifications) {
		t.Errorf("updatepkg.Classifications %v\ndiffer from bootstrap.UpdateClassifications %v", updatepkg.Classifications, bootstrap.UpdateClassifications)
	}
	if len(updatepkg.Classifications) != 14 {
		t.Errorf("%d classifications, want the 14 WSUS synchronizes", len(updatepkg.Classifications))
	}
}

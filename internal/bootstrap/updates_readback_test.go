package bootstrap

import (
	"strings"
	"testing"
)

// TestUpdatesInstalledStep: the read-back step names every listed KB and
// reads Get-HotFix; its "installed-update" lines are what the image records.
func TestUpdatesInstalledStep(t *testing.T) {
	steps, err := updatesInstalledStep([]WindowsUpdate{{KB: "KB5070010"}, {KB: "kb5070011"}})
	if err != nil || len(steps) != 1 {
		t.Fatalf("steps %v, err %v", steps, err)
	}
	for _, want := range []string{"$want = @('KB5070010', 'KB5070011')", "Get-HotFix", "throw ('update ' + ($missing -join ', ') + ' is not installed"} {
		if !strings.Contains(steps[0].Script, want) {
			t.Errorf("the read-back step lacks %q:\n%s", want, steps[0].Script)
		}
	}
	if steps, _ := updatesInstalledStep(nil); len(steps) != 0 {
		t.Errorf("a read-back step without updates: %v", steps)
	}
	got := ParseInstalledUpdates("installed-update KB5070010\r\nnoise installed-update KB1\r\ninstalled-update KB5070011\r\n")
	if strings.Join(got, " ") != "KB5070010 KB5070011" {
		t.Errorf("ParseInstalledUpdates = %v, want KB5070010 KB5070011", got)
	}
}

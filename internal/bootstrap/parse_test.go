package bootstrap

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/pwsh"
)

// TestScriptsParse runs every golden script and every rendered step through
// the tree-sitter PowerShell grammar, the same syntax gate the simulated
// hosts apply before they run anything: a step the gate rejects would fail
// there as a ParserError (and a construct the grammar cannot read would hide
// a gap in the simulator's coverage).
func TestScriptsParse(t *testing.T) {
	golden, err := filepath.Glob(filepath.Join("testdata", "*.ps1"))
	if err != nil || len(golden) == 0 {
		t.Fatalf("no golden scripts: %v", err)
	}
	for _, path := range golden {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pwsh.Parse(string(b)); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
	var steps []Step
	image, err := ImageSteps(testImageConfig())
	if err != nil {
		t.Fatal(err)
	}
	join, err := JoinSteps(testJoinConfig())
	if err != nil {
		t.Fatal(err)
	}
	sysprep, err := SysprepStep(UnattendConfig{})
	if err != nil {
		t.Fatal(err)
	}
	steps = append(append(append(steps, image...), join...), sysprep)
	for _, s := range steps {
		if _, err := pwsh.Parse(s.Script); err != nil {
			line := ""
			if pe := (*pwsh.ParseError)(nil); errors.As(err, &pe) {
				line = strings.TrimSpace(pe.Source)
			}
			t.Errorf("step %s: %v: %s", s.Name, err, line)
		}
	}
}

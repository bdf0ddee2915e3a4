package pwsh

import (
	"strings"
	"testing"
)

// TestPositionEcho checks the position message's echo against Windows
// PowerShell 5.1's own output and its algorithm (PositionUtilities.VerboseMessage).
func TestPositionEcho(t *testing.T) {
	cmd := `PackageManagement\Install-Package @PSBoundParameters`
	long := strings.Repeat("QUJD", 40) + "SECRETSECRET" + strings.Repeat("REVG", 40)
	for _, c := range []struct {
		name       string
		src        string
		col, width int
		shown      string
		marks      string
	}{
		// What 5.1 prints for PowerShellGet 1.0.0.1's PSModule.psm1:1809 char:21.
		{"5.1 sample", strings.Repeat(" ", 12) + "$null = " + cmd, 21, len(cmd),
			"...          $null = " + cmd, strings.Repeat(" ", 21) + strings.Repeat("~", 52)},
		{"short line", "Write-Output 'a'; throw 'boom'", 19, 12, "Write-Output 'a'; throw 'boom'", strings.Repeat(" ", 18) + strings.Repeat("~", 12)},
		// Cut on both sides: 49 characters before the error, 8 after.
		{"middle of a long line", long, 161, 12, "... " + long[111:180] + " ...", strings.Repeat(" ", 53) + strings.Repeat("~", 12)},
		// Near the start: no prefix dots, the rest after.
		{"start of a long line", long, 3, 4, long[:69] + " ...", "  ~~~~"},
		// An error wider than the window keeps 12 characters before it.
		{"wide error", long, 101, 200, "... " + long[88:157] + " ...", strings.Repeat(" ", 16) + strings.Repeat("~", 57)},
		// Tabs are four spaces, the marks shift with them.
		{"tabs", "\tthrow\t'x'", 2, 9, "    throw    'x'", "    " + strings.Repeat("~", 12)},
		{"end of input", "if (", 5, 0, "if (", "    ~"},
	} {
		shown, marks := positionEcho(c.src, c.col, c.width)
		if shown != c.shown || marks != c.marks {
			t.Errorf("%s:\n got %q\n     %q\nwant %q\n     %q", c.name, shown, marks, c.shown, c.marks)
		}
	}
}

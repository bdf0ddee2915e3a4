package remote

import (
	"encoding/base64"
	"strings"
	"unicode/utf16"

	"github.com/wincluster/terraform-provider-windows/internal/psquote"
)

// maxCommandLine is cmd.exe's limit on one command line: both WinRM (through
// cmd /c) and Windows OpenSSH (default shell cmd.exe) run our commands there.
const maxCommandLine = 8191

// psPrefix silences progress records, which would otherwise arrive on stderr
// as CLIXML noise.
const psPrefix = "$ProgressPreference = 'SilentlyContinue'\n"

const psExe = "powershell.exe -NoProfile -NonInteractive -ExecutionPolicy Bypass"

// encodedCommand returns the command line that runs script inline, or ""
// when it would exceed maxCommandLine.
func encodedCommand(script string) string {
	u := utf16.Encode([]rune(psPrefix + script))
	raw := make([]byte, 2*len(u))
	for i, c := range u {
		raw[2*i], raw[2*i+1] = byte(c), byte(c>>8)
	}
	line := psExe + " -EncodedCommand " + base64.StdEncoding.EncodeToString(raw)
	if len(line) > maxCommandLine {
		return ""
	}
	return line
}

// fileCommand runs a .ps1 file.
func fileCommand(path string) string {
	return psExe + ` -File "` + path + `"`
}

// quotePS returns s as a PowerShell single-quoted literal: nothing in it
// expands, and no quote character PowerShell knows can end it.
func quotePS(s string) string { return psquote.Single(s) }

// utf8BOM makes Windows PowerShell 5.1 read a .ps1 file as UTF-8 (without it
// the file is read in the ANSI code page).
const utf8BOM = "\ufeff"

// parentDir returns the directory of a Windows path.
func parentDir(p string) string {
	i := strings.LastIndexAny(p, `\/`)
	if i <= 0 {
		return p
	}
	if i == 2 && p[1] == ':' {
		return p[:3]
	}
	return p[:i]
}

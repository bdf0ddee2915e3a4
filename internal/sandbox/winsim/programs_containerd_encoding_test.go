package winsim

import (
	"bytes"
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/pwsh"
)

// TestContainerdConfigEncodings writes config.toml the ways a script might on
// Windows PowerShell 5.1 and holds containerd to what its TOML library does
// with the bytes (parseContainerdTOML): Out-File's UTF-16LE (the > redirection) fails in both
// majors, Set-Content -Encoding UTF8's byte order mark fails in 2.x (go-toml
// v2) and passes in 1.7 (go-toml v1 drops it), and [IO.File]::WriteAllText
// and Set-Content -Encoding ASCII pass everywhere.
func TestContainerdConfigEncodings(t *testing.T) {
	h := startSCMHost(t, nil)
	dir := `C:\Program Files\containerd`
	const ps = `C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`
	const conf = `C:\Program Files\containerd\config.toml`
	for _, tc := range []struct {
		version, write, wantErr string
	}{
		{"v2.2.0", "$c > $p", "failed to unmarshal TOML at row 1 column 1: toml: invalid character at start of key: U+00FF 'ÿ'"},
		{"v2.2.0", "Set-Content -Path $p -Value $c -Encoding UTF8", "failed to unmarshal TOML at row 1 column 1: toml: invalid character at start of key: U+00EF 'ï'"},
		{"v2.2.0", "[IO.File]::WriteAllText($p, $c)", ""},
		{"v2.2.0", "Set-Content -Path $p -Value $c -Encoding ASCII", ""},
		{"v2.2.0", "Set-Content -Path $p -Value $c", ""},
		{"1.7.24", "$c > $p", "failed to load TOML: " + conf + ": (1, 1): parsing error: keys cannot contain \x00 character"},
		{"1.7.24", "Set-Content -Path $p -Value $c -Encoding UTF8", ""},
		{"1.7.24", "[IO.File]::WriteAllText($p, $c)", ""},
	} {
		if err := h.WriteFile(dir+`\bin\containerd.exe`, exe("containerd", tc.version)); err != nil {
			t.Fatal(err)
		}
		script := "$p = '" + conf + "'\n$c = \"version = 2`r`n[plugins.'io.containerd.grpc.v1.cri']`r`n  sandbox_image = 'x/pause:1'\"\n" + tc.write
		if _, errOut, code := runProgram(t, h.Host, ps, "-NoProfile", "-EncodedCommand", base64.StdEncoding.EncodeToString(pwsh.EncUnicode.Bytes(script))); code != 0 {
			t.Fatalf("%s: %q", tc.write, errOut)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		var out, errOut bytes.Buffer
		code := h.Run(ctx, &Process{Path: dir + `\bin\containerd.exe`, Args: []string{"--config", conf}, Stdout: &out, Stderr: &errOut})
		cancel()
		switch {
		case tc.wantErr == "" && (code != 0 || !strings.Contains(errOut.String(), "successfully booted")):
			t.Errorf("containerd %s, %s: exit %d %q", tc.version, tc.write, code, errOut.String())
		case tc.wantErr != "" && (code != 1 || !strings.Contains(errOut.String(), "containerd: "+tc.wantErr)):
			t.Errorf("containerd %s, %s: exit %d %q, want %q", tc.version, tc.write, code, errOut.String(), tc.wantErr)
		}
	}
}

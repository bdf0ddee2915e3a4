package remote

import (
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/goldenfile"
)

// TestTransportScriptsGolden holds the PowerShell the transports send of
// their own (an upload's precheck, stdin decoding over WinRM, the final
// hash check and move, the removal of a temporary file) in
// testdata/transport-scripts.ps1, "########## <name>" before each: winsim's
// walk test (TestProviderScriptsModelled) parses and binds every script
// there against the simulated host.
func TestTransportScriptsGolden(t *testing.T) {
	dest := `C:\k\kubelet.exe`
	tmp := dest + ".upload-0123456789ab"
	sha := strings.Repeat("ab", 32)
	scripts := []struct{ name, script string }{
		{"upload-precheck", precheckScript(dest)},
		{"upload-stdin", stdinUploadScript(tmp)},
		{"upload-finalize", finalizeScript(tmp, dest, sha)},
		{"remove-temporary-script", removeScript(`C:\Windows\Temp\tfwin-0123456789abcdef.ps1`)},
	}
	var b strings.Builder
	for _, s := range scripts {
		b.WriteString("########## " + s.name + "\n" + s.script + "\n")
	}
	goldenfile.Check(t, "transport-scripts.ps1", b.String())
}

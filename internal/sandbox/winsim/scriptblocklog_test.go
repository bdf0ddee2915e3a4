package winsim_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/winsimtest"
)

// CheckSuspiciousContent's rule in Windows PowerShell 5.1 (CompiledScriptBlock.cs):
// a word of letters and hyphens equal to a signature, case folded.
func TestSuspiciousSignature(t *testing.T) {
	for text, want := range map[string]string{
		`Add-Type -TypeDefinition $src`: "Add-Type",
		`$x.GetType().GetMethods()`:     "GetMethods",
		`$t.getmethods()`:               "GetMethods",
		`Set-ItemProperty HKLM:\...\ScriptBlockLogging -Name x -Value 0`: "ScriptBlockLogging",
		`[Runtime.InteropServices.Marshal]::PtrToStringAuto($p)`:         "InteropServices",
		`Write-Output 'node files written'`:                              "",
		`Get-FileHash -Algorithm SHA256 -LiteralPath 'C:\k\ca.crt'`:      "",
		// A signature must be a whole word: no digit in it, nothing around it.
		`[Convert]::FromBase64String('QQ==')`: "",
		`LoadFrom('kernel32.dll')`:            "",
		`Add-TypeX; GetMethodsCount`:          "",
	} {
		if got := winsim.SuspiciousSignature(text); got != want {
			t.Errorf("SuspiciousSignature(%q) = %q, want %q", text, got, want)
		}
	}
}

// A script with suspicious content lands in event 4104 of the PowerShell
// Operational log at level Warning, with its text, though no policy turned
// logging on; a script without does not; the policy turning logging off
// stops both, turning it on logs every block.
func TestScriptBlockLogging(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f := winsimtest.StartHost(t, nil)
	c := clientAs(t, f, "Administrator", winsimtest.Password)
	run := func(script string) {
		t.Helper()
		if _, errOut, code, err := c.RunPSWithContext(ctx, script); err != nil || code != 0 {
			t.Fatalf("%q: exit %d %v: %s", script, code, err, errOut)
		}
	}
	count := func() int { return len(f.Host.Events(winsim.PowerShellOperationalLog)) }

	run(`$s = 'plain-script-marker'`)
	if n := count(); n != 0 {
		t.Fatalf("a script without suspicious content was logged: %d events", n)
	}
	run(`$p = 'Bypass'; $s = 'c2VjcmV0LXRva2Vu'`)
	ev := f.Host.Events(winsim.PowerShellOperationalLog)
	if len(ev) != 1 {
		t.Fatalf("want one event, got %d", len(ev))
	}
	e := ev[0]
	if e.ID != winsim.EventScriptBlock || e.Level != winsim.EventLevelWarning || !strings.Contains(e.Data["ScriptBlockText"], "c2VjcmV0LXRva2Vu") ||
		e.Data["MessageNumber"] != "1" || e.Data["MessageTotal"] != "1" || e.Data["ScriptBlockId"] == "" {
		t.Fatalf("event: %+v", e)
	}

	setPolicy := func(v uint32) {
		t.Helper()
		if err := f.Host.SetRegistryValue(winsim.ScriptBlockLoggingKey, "EnableScriptBlockLogging", winsim.RegValue{Type: winsim.RegDWord, DWord: v}); err != nil {
			t.Fatal(err)
		}
	}
	setPolicy(0)
	run(`$p = 'Bypass'`)
	if n := count(); n != 1 {
		t.Fatalf("logging turned off by policy still logged: %d events", n)
	}
	setPolicy(1)
	run(`$s = 'plain-script-marker'`)
	ev = f.Host.Events(winsim.PowerShellOperationalLog)
	if len(ev) != 2 || ev[1].Level != winsim.EventLevelVerbose || !strings.Contains(ev[1].Data["ScriptBlockText"], "plain-script-marker") {
		t.Fatalf("logging turned on by policy: %+v", ev)
	}

	// A long script is split into segments of 10,000 to 19,999 characters.
	long := "$s = '" + strings.Repeat("a", 25000) + "'"
	run(long)
	ev = f.Host.Events(winsim.PowerShellOperationalLog)[2:]
	var joined strings.Builder
	for _, e := range ev {
		if e.Data["MessageTotal"] != "2" && e.Data["MessageTotal"] != "3" {
			t.Fatalf("MessageTotal %s for %d characters", e.Data["MessageTotal"], len(long))
		}
		joined.WriteString(e.Data["ScriptBlockText"])
	}
	// The client prefixes its own line ($ProgressPreference).
	if !strings.HasSuffix(joined.String(), long) {
		t.Fatal("the segments do not join into the script")
	}
}

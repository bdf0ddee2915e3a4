package pwsh

import (
	"strings"
	"testing"
)

// The language and .NET features the HostProcess start scripts use
// (internal/kube/templates/*-start.ps1.tmpl), each against its reference.
func TestStartScriptFeatures(t *testing.T) {
	const dotnet = "https://learn.microsoft.com/en-us/dotnet/api/"
	for _, tc := range []struct {
		name, script string
		stdout       string
		stderr       string
		code         int
		source       string
	}{
		{"multiple-assignment", `$a, $b = '10.244.3.1/24' -split '/'; $a; $b; $x, $y = 'one'; $y -eq $null; $p, $q = 1, 2, 3; $q.Count`,
			"10.244.3.1\r\n24\r\nTrue\r\n2", "", 0, docAbout + "about_assignment_operators"},
		{"increment-statement-silent", `$i = 0; $i++; ++$i; $j = $i++; $j; $i; $n++; $n`, "2\r\n3\r\n1", "", 0, docAbout + "about_assignment_operators"},
		{"bitwise", `10 -band 3; 8 -bor 1; 6 -bxor 3; '12' -band 4; 2.5 -band 3`, "2\r\n9\r\n5\r\n4\r\n2", "", 0, docAbout + "about_arithmetic_operators"},
		{"int-cast-rounds-to-even", `[int]2.5; [int]3.5; [int]'7'; [int](256 - [Math]::Pow(2, 8 - 8))`, "2\r\n4\r\n7\r\n255", "", 0, docAbout + "about_type_conversion"},
		{"math", `[Math]::Min([Math]::Max(24 - 8 * 3, 0), 8); [Math]::Pow(2, 3).GetType().FullName`, "0\r\nSystem.Double", "", 0, dotnet + "system.math.pow"},
		{"ipaddress", `$b = ([Net.IPAddress]::Parse('10.244.3.1')).GetAddressBytes(); $b.GetType().FullName; $b[3] = $b[3] -band 0; ([Net.IPAddress]::new($b)).ToString()`,
			"System.Byte[]\r\n10.244.3.0", "", 0, dotnet + "system.net.ipaddress"},
		{"ipaddress-bad", `[Net.IPAddress]::Parse('10.244.3.x')`, "", `Exception calling "Parse" with "1" argument(s): "An invalid IP address was specified."`, 1, dotnet + "system.net.ipaddress.parse"},
		{"ipaddress-inet-aton-refused", `[Net.IPAddress]::Parse('10.1')`, "", "SimulatorNotModelled", 1, dotnet + "system.net.ipaddress.parse"},
		{"byte-overflow", `$b = [byte[]](1, 2); $b[0] = 256`, "", `Cannot convert value "256" to type "System.Byte". Error: "Value was either too large or too small for an unsigned byte."`, 1, dotnet + "system.convert.tobyte"},
		{"json-object", `$o = '{"ips":[{"version":"4","address":"10.244.3.2/24"}],"n":5}' | ConvertFrom-Json; (($o.ips[0].address) -split '/')[0]; $o.n.GetType().FullName`,
			"10.244.3.2\r\nSystem.Int32", "", 0, docBase + "microsoft.powershell.utility/convertfrom-json?view=powershell-5.1"},
		// 5.1 writes a top-level array as one object: ForEach-Object runs
		// once, for the whole array (PowerShell 7's -NoEnumerate describes it).
		{"json-array-is-one-object", `'[1,2,3]' | ConvertFrom-Json | ForEach-Object { 'item ' + $_.Count }`, "item 3", "", 0,
			docBase + "microsoft.powershell.utility/convertfrom-json?view=powershell-7.4#-noenumerate"},
		{"json-lines-joined", `$l = '{', '"a": 1', '}'; ($l | ConvertFrom-Json).a`, "1", "", 0, docBase + "microsoft.powershell.utility/convertfrom-json?view=powershell-5.1"},
		{"json-decimal-refused", `'{"a":1.5}' | ConvertFrom-Json`, "", "SimulatorNotModelled", 1, docBase + "microsoft.powershell.utility/convertfrom-json?view=powershell-5.1"},
		{"json-duplicate-keys", `'{"a":1,"A":2}' | ConvertFrom-Json`, "", "duplicated keys 'a' and 'A'", 1, docBase + "microsoft.powershell.utility/convertfrom-json?view=powershell-5.1"},
		{"script-file", "& 'C:\\s\\t.ps1' x; \"code $LASTEXITCODE $?\"; $inner -eq $null", "in x\r\ncode 3 False\r\nTrue", "", 0, docAbout + "about_scripts"},
		{"script-file-exit-passes-through", "& 'C:\\s\\t.ps1'", "in ", "", 3, docAbout + "about_powershell_exe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newFakeHost()
			h.files[key(`C:\s\t.ps1`)] = []byte("$inner = 1\r\n'in ' + $args\r\nexit 3\r\n'not reached'\r\n")
			out, errOut, code := runFake(t, h, tc.script, "")
			got := strings.TrimRight(out, "\r\n")
			if got != tc.stdout || code != tc.code {
				t.Errorf("stdout %q exit %d, want %q exit %d (source %s)\nstderr: %s", got, code, tc.stdout, tc.code, tc.source, errOut)
			}
			if tc.stderr == "" && errOut != "" {
				t.Errorf("unexpected stderr: %s", errOut)
			}
			if tc.stderr != "" && !strings.Contains(errOut, tc.stderr) {
				t.Errorf("stderr %q does not contain %q (source %s)", errOut, tc.stderr, tc.source)
			}
		})
	}
}

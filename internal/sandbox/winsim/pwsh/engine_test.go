package pwsh

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

const (
	docAbout = "https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/"
)

func runFake(t *testing.T, h *fakeHost, script, stdin string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	res := Run(context.Background(), script, Options{Host: h, Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errOut})
	return out.String(), errOut.String(), res.ExitCode
}

func TestEngine(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		stdout       string // exact, CRLF lines trimmed at the end
		stderr       string // fragment ("" : stderr must be empty)
		code         int
		source       string
	}{
		{"expand-subexpression", `$a = 2; "x $($a + 3) $env:COMPUTERNAME"`, "x 5 WIN-FAKE", "", 0, docAbout + "about_quoting_rules"},
		{"single-quoted-literal", `'$a ` + "`n" + ` it''s'`, "$a `n it's", "", 0, docAbout + "about_quoting_rules"},
		{"backtick-escapes", "\"a`tb\"", "a\tb", "", 0, docAbout + "about_special_characters"},
		{"here-string", "$v = 'x'\n$s = @\"\nline $v\n\"@\n$s", "line x", "", 0, docAbout + "about_quoting_rules"},
		{"arithmetic", `1 + 2 * 3; 7 / 2; '5' + 1; 1 + '5'`, "7\r\n3.5\r\n51\r\n6", "", 0, docAbout + "about_arithmetic_operators"},
		{"comparison-case-insensitive", `'ABC' -eq 'abc'; 'ABC' -ceq 'abc'; 3 -gt 2; 'a' -in 'b','A'`, "True\r\nFalse\r\nTrue\r\nTrue", "", 0, docAbout + "about_comparison_operators"},
		{"array-filter", `(1,2,3,4) -gt 2`, "3\r\n4", "", 0, docAbout + "about_comparison_operators"},
		{"like-match", `'kubelet.exe' -like 'kube*'; if ('v1.36.3' -match '^v(\d+)\.(\d+)') { $Matches[2] }`, "True\r\n36", "", 0, docAbout + "about_comparison_operators"},
		{"contains", `@('a','b') -contains 'B'; @('a') -notcontains 'a'`, "True\r\nFalse", "", 0, docAbout + "about_comparison_operators"},
		{"format-hex-negative", `'{0:X8}' -f -2145124329; '{0:x}' -f 3010`, "80240017\r\nbc2", "", 0, "https://learn.microsoft.com/en-us/dotnet/standard/base-types/standard-numeric-format-strings#hexadecimal-format-specifier-x (two's complement of a negative Int32)"},
		{"join-split-format-replace", `(@('a','b') -join ','); ('a,b' -split ',').Count; '{0}-{1}' -f 'x', 7; 'aXbX' -replace 'x', '_'`, "a,b\r\n2\r\nx-7\r\na_b_", "", 0, docAbout + "about_join"},
		{"while-break", "$i = 0\nwhile ($true) { $i++; if ($i -ge 3) { break } }\nwhile ($i -lt 5) { $i++ }\n$i", "5", "", 0, docAbout + "about_while"},
		{"hashtable", `$h = @{ Name = 'k'; Port = 10250 }; $h.Name; $h['Port']; $h.Count; $h.Missing -eq $null`, "k\r\n10250\r\n2\r\nTrue", "", 0, docAbout + "about_hash_tables"},
		{"ordered-hashtable", `$h = [ordered]@{ b = 1; a = 2 }; $h.Keys -join ','`, "b,a", "", 0, docAbout + "about_hash_tables"},
		{"pscustomobject", `$o = [pscustomobject]@{ Hash = 'AB' }; $o.Hash`, "AB", "", 0, docAbout + "about_pscustomobject"},
		{"foreach", `$s = 0; foreach ($i in 1, 2, 3) { $s += $i }; $s`, "6", "", 0, docAbout + "about_foreach"},
		{"foreach-break", `foreach ($i in 1, 2, 3) { if ($i -eq 2) { break }; $i }`, "1", "", 0, docAbout + "about_break"},
		{"range-statement-start-refused", `1..2 | Out-Null`, "", "SimulatorNotModelled", 1, "grammar gap (package doc)"},
		{"where-foreach-object", `@(1, 2, 3, 4, 5) | Where-Object { $_ % 2 } | ForEach-Object { $_ * 10 }`, "10\r\n30\r\n50", "", 0, docAbout + "about_pipelines"},
		{"array-expression-keeps-array", `$a = @(5); $a.GetType().FullName; $a.Count`, "System.Object[]\r\n1", "", 0, docAbout + "about_arrays"},
		{"index", `$a = 'x', 'y', 'z'; $a[0]; $a[-1]; $a[9] -eq $null`, "x\r\nz\r\nTrue", "", 0, docAbout + "about_arrays"},
		{"string-methods", `'  Ab '.Trim().ToLower(); 'a.b'.Split('.')[1]; 'abc'.Length`, "ab\r\nb\r\n3", "", 0, "https://learn.microsoft.com/en-us/dotnet/api/system.string"},
		{"try-catch-dollar-underscore", `try { throw 'boom' } catch { "caught: $($_.Exception.Message)" } finally { 'done' }`, "caught: boom\r\ndone", "", 0, docAbout + "about_try_catch_finally"},
		{"catch-type-filter", `try { [int]'x' } catch [System.Management.Automation.RuntimeException] { 'rt' } catch { 'other' }`, "rt", "", 0, docAbout + "about_try_catch_finally"},
		{"throw-exit-1", `'a'; throw 'bad config'; 'b'`, "a", "bad config", 1, docAbout + "about_throw"},
		{"exit-code", `'a'; exit 42; 'b'`, "a", "", 42, docAbout + "about_language_keywords#exit"},
		{"lastexitcode", `$ErrorActionPreference = 'Stop'; cmd /c exit 3; "code $LASTEXITCODE ok $?"`, "code 3 ok False", "", 0, docAbout + "about_automatic_variables#lastexitcode"},
		{"native-stdout-pipeline", `$x = cmd /c echo hello; $x.ToUpper()`, "HELLO", "", 0, docAbout + "about_pipelines"},
		{"native-stderr-2>&1-under-stop", `$ErrorActionPreference = 'Stop'; cmd /c "echo oops 1>&2" 2>&1; 'after'`, "", "NativeCommandError", 1, "https://github.com/PowerShell/PowerShell/issues/3996"},
		{"command-not-found", `Star-Service x; 'next'`, "next", "The term 'Star-Service' is not recognized as the name of a cmdlet", 0, docAbout + "about_command_precedence"},
		{"command-not-found-stop", "$ErrorActionPreference = 'Stop'\nStar-Service x\n'next'", "", "CommandNotFoundException", 1, docAbout + "about_preference_variables#erroractionpreference"},
		{"method-not-found", `'abc'.ToLowr()`, "", "Method invocation failed because [System.String] does not contain a method named 'ToLowr'.", 1, "https://learn.microsoft.com/en-us/dotnet/api/system.string"},
		{"static-method-not-found", `[IO.File]::WriteAlBytes('C:\x', $null)`, "", "does not contain a method named 'WriteAlBytes'", 1, "https://learn.microsoft.com/en-us/dotnet/api/system.io.file"},
		{"type-not-found", `[Nope.Type]::X()`, "", "Unable to find type [Nope.Type].", 1, docAbout + "about_type_accelerators"},
		{"bad-cast", `[int]'abc'`, "", `Cannot convert value "abc" to type "System.Int32". Error: "Input string was not in a correct format."`, 1, docAbout + "about_type_conversion"},
		{"null-method", `$nothing.Trim()`, "", "You cannot call a method on a null-valued expression.", 1, docAbout + "about_null"},
		{"bad-base64", `[Convert]::FromBase64String('***')`, "", `Exception calling "FromBase64String" with "1" argument(s)`, 1, "https://learn.microsoft.com/en-us/dotnet/api/system.convert.frombase64string"},
		{"parse-error-runs-nothing", "'first'\nif ($x {", "", "ParserError", 1, docAbout + "about_parsing"},
		{"comment-is-not-statement", "# Restart-Computer -Force\n'ok'", "ok", "", 0, docAbout + "about_comments"},
		{"string-is-not-statement", `$s = 'Stop-Service x'; $s`, "Stop-Service x", "", 0, docAbout + "about_quoting_rules"},
		{"unknown-parameter", `Write-Output -Nme 'x'`, "", "A parameter cannot be found that matches parameter name 'Nme'.", 1, docAbout + "about_parameters"},
		{"select-expand-missing", `[pscustomobject]@{ A = 1 } | Select-Object -ExpandProperty B`, "", `Property "B" cannot be found.`, 1, docBase + "microsoft.powershell.utility/select-object?view=powershell-5.1"},
		{"select-expand", `[pscustomobject]@{ A = 1 } | Select-Object -ExpandProperty A`, "1", "", 0, docBase + "microsoft.powershell.utility/select-object?view=powershell-5.1"},
		{"write-error-nonterminating", `Write-Error 'e1'; 'after'`, "after", "e1", 0, docBase + "microsoft.powershell.utility/write-error?view=powershell-5.1"},
		{"write-error-last-fails", `'x'; Write-Error 'e1'`, "x", "e1", 1, "https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_powershell_exe?view=powershell-5.1"},
		{"silently-continue", `Write-Error 'e1' -ErrorAction SilentlyContinue; $?`, "False", "", 0, docAbout + "about_commonparameters"},
		{"bad-erroraction", `Write-Output 'x' -ErrorAction Sometimes`, "", "Unable to match the identifier name Sometimes", 1, docAbout + "about_commonparameters"},
		{"stdin-input", `foreach ($l in $input) { "[$l]" }`, "[a]\r\n[b]", "", 0, docAbout + "about_automatic_variables#input"},
		{"upload-script", "$f = [IO.File]::Create('C:\\up.bin'); try { foreach ($l in $input) { if ($l) { $b = [Convert]::FromBase64String($l); $f.Write($b, 0, $b.Length) } } } finally { $f.Close() }\n[Text.Encoding]::UTF8.GetString([IO.File]::ReadAllBytes('C:\\up.bin'))", "ab", "", 0, "internal/remote stdinUploadScript"},
		{"env-machine", `[Environment]::SetEnvironmentVariable('NODE_NAME', 'win-0', 'Machine'); [Environment]::GetEnvironmentVariable('NODE_NAME', 'Machine')`, "win-0", "", 0, "https://learn.microsoft.com/en-us/dotnet/api/system.environment.setenvironmentvariable"},
		{"osversion", `[Environment]::OSVersion.Version.ToString(); [Environment]::OSVersion.Version.Build`, "10.0.20348.0\r\n20348", "", 0, "https://learn.microsoft.com/en-us/dotnet/api/system.environment.osversion"},
		{"for-loop", `for ($i = 0; $i -lt 3; $i += 1) { $i }`, "0\r\n1\r\n2", "", 0, docAbout + "about_for"},
		{"redirect-token-no-space", "$ErrorActionPreference = 'Stop'\nWrite-Output 'x' 2>$null\ncmd /c \"echo oops 1>&2\" 2>$null\n'after'", "x", "NativeCommandError", 1, docAbout + "about_redirection"},
		{"duplicate-key-parse-error", "'ran'\n@{ Port = 1; port = 2 }", "", "Duplicate keys 'port' are not allowed in hash literals.", 1, "SemanticChecks.cs VisitHashtable (github.com/PowerShell/PowerShell)"},
		{"duplicate-key-quoted", `@{ 'a b' = 1; "A B" = 2 }`, "", "DuplicateKeyInHashLiteral", 1, "SemanticChecks.cs VisitHashtable (github.com/PowerShell/PowerShell)"},
		{"int-cast-overflow", `[int]2147483647; [int]'2147483648'`, "2147483647", "Value was either too large or too small for an Int32.", 1, "LanguagePrimitives.cs ConvertStringToInteger (github.com/PowerShell/PowerShell)"},
		{"int-cast-through-double", `[int]'4.5'; [int]'5.5'; [long]'1e3'`, "4\r\n6\r\n1000", "", 0, "LanguagePrimitives.cs ConvertNumericThroughDouble (github.com/PowerShell/PowerShell)"},
		{"missing-property-is-null", `$h = @{}; $null -eq $h.Nope; $null -eq 'abc'.Nope; ([pscustomobject]@{ A = 1 }).Count`, "True\r\nTrue\r\n1", "", 0, docAbout + "about_properties"},
		{"hashtable-real-property-refused", `@{}.IsReadOnly`, "", "SimulatorNotModelled", 1, "https://learn.microsoft.com/en-us/dotnet/api/system.collections.hashtable.isreadonly"},
		{"psversiontable-needs-machine-info", `$PSVersionTable.PSVersion`, "", "SimulatorNotModelled", 1, docAbout + "about_automatic_variables"},
		{"null-assign-discards", `$null = 'x'; 'y' > $null; 'z'`, "z", "", 0, docAbout + "about_redirection"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// source: tc.source
			stdin := ""
			if tc.name == "stdin-input" {
				stdin = "a\r\nb\r\n"
			}
			if tc.name == "upload-script" {
				stdin = "YQ==\r\nYg==\r\n"
			}
			out, errOut, code := runFake(t, newFakeHost(), tc.script, stdin)
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

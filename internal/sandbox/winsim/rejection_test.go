package winsim_test

import (
	"context"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/masterzen/winrm"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/winsimtest"
)

const (
	about = "https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/"
	mgmt  = "https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.management/"
	of51  = "https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.utility/out-file?view=powershell-5.1"
)

// noStderr as a case's stderr: the error stream must be empty.
const noStderr = "\x00none"

// decodeCLIXML turns powershell.exe's CLIXML error stream back into text.
func decodeCLIXML(s string) string {
	if !strings.HasPrefix(s, "#< CLIXML") {
		return s
	}
	var b strings.Builder
	for _, m := range regexp.MustCompile(`(?s)<S S="Error">(.*?)</S>`).FindAllStringSubmatch(s, -1) {
		t := strings.NewReplacer("_x000D_", "\r", "_x000A_", "\n", "_x005F_", "_").Replace(m[1])
		b.WriteString(html.UnescapeString(t))
	}
	return b.String()
}

// TestWindowsRejects runs scripts that Windows PowerShell 5.1 rejects or
// answers in a known way through an outside WinRM client (masterzen/winrm,
// NTLM over HTTPS, -EncodedCommand as Terraform and the provider send it).
// Every case must behave as Windows does or be refused; none may pass where
// Windows fails.
func TestWindowsRejects(t *testing.T) {
	f := winsimtest.StartHost(t, nil)
	endpoint := winrm.NewEndpoint("127.0.0.1", f.Host.Ports().WinRMHTTPS, true, false, f.CA.CertPEM, nil, nil, 30*time.Second)
	params := *winrm.DefaultParameters
	params.TransportDecorator = func() winrm.Transporter { return &winrm.ClientNTLM{} }
	client, err := winrm.NewClientWithParameters(endpoint, "Administrator", f.Password, &params)
	if err != nil {
		t.Fatal(err)
	}
	const setup = "New-Item -ItemType Directory -Force -Path 'C:\\k' | Out-Null\n"
	for _, tc := range []struct {
		name, script   string
		code           int
		stdout, stderr string // fragments ("" checks nothing)
		source         string
	}{
		// Unknown commands, parameters, members, values.
		{"misspelt-cmdlet", "Star-Service -Name 'x'", 1, "", "The term 'Star-Service' is not recognized as the name of a cmdlet, function, script file, or operable program.", about + "about_command_precedence"},
		{"remove-service-not-in-5.1", "Remove-Service -Name 'x'", 1, "", "The term 'Remove-Service' is not recognized", "https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.management/remove-service?view=powershell-7.4 (added in PowerShell 6.0)"},
		{"unknown-parameter", "Get-Service -Nme 'x'", 1, "", "A parameter cannot be found that matches parameter name 'Nme'.", about + "about_parameters"},
		{"ambiguous-parameter", "Get-FileHash -P 'C:\\x'", 1, "", "Parameter cannot be processed because the parameter name 'P' is ambiguous.", about + "about_parameters"},
		{"positional-overflow", "Get-Content 'C:\\a' 'C:\\b' 'C:\\c'", 1, "", "A positional parameter cannot be found that accepts argument", about + "about_parameters"},
		{"missing-argument", "Get-Service -Name", 1, "", "Missing an argument for parameter 'Name'.", about + "about_parameters"},
		{"missing-mandatory", "New-Service -Name 'x'", 1, "", "Cannot process command because of one or more missing mandatory parameters: BinaryPathName.", mgmt + "new-service?view=powershell-5.1"},
		{"bad-direction-enum", "New-NetFirewallRule -DisplayName 'x' -Direction Inbund -Action Allow", 1, "", `Cannot convert value "Inbund" to type "Microsoft.PowerShell.Cmdletization.GeneratedTypes.NetSecurity.Direction"`, "https://learn.microsoft.com/en-us/powershell/module/netsecurity/new-netfirewallrule"},
		{"bad-action-enum", "New-NetFirewallRule -DisplayName 'x' -Direction Inbound -Action Permit", 1, "", "NotConfigured, Allow, Block", "https://learn.microsoft.com/en-us/powershell/module/netsecurity/new-netfirewallrule"},
		{"bad-startuptype", "New-Service -Name 'x' -BinaryPathName 'C:\\x.exe' -StartupType Sometimes", 1, "", "Boot, System, Automatic, Manual, Disabled", mgmt + "new-service?view=powershell-5.1"},
		{"bad-hash-algorithm", "Get-FileHash -Algorithm SHA999 -LiteralPath 'C:\\x'", 1, "", `does not belong to the set "SHA1,SHA256,SHA384,SHA512,MACTripleDES,MD5,RIPEMD160"`, "https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.utility/get-filehash?view=powershell-5.1"},
		{"bad-erroraction", "Get-Service -ErrorAction Sometimes", 1, "", "Unable to match the identifier name Sometimes", about + "about_commonparameters"},
		{"unknown-time-zone", "Set-TimeZone -Id 'Europe/London'", 1, "", "The time zone ID 'Europe/London' was not found on the local computer.", "PowerShell/PowerShell TimeZoneCommands.cs (FindSystemTimeZoneById)"},
		{"time-zone-by-name-unmodelled", "Set-TimeZone -Name 'Pacific Standard Time'", 1, "", "", mgmt + "set-timezone?view=powershell-5.1"},
		{"misspelt-method", "'abc'.ToLowr()", 1, "", "does not contain a method named 'ToLowr'", about + "about_methods"},
		{"misspelt-static-method", "[IO.File]::WriteAlBytes('C:\\x', [byte[]]@())", 1, "", "does not contain a method named 'WriteAlBytes'", "https://learn.microsoft.com/en-us/dotnet/api/system.io.file"},
		{"unknown-type", "[System.Nope]::Go()", 1, "", "Unable to find type [System.Nope].", about + "about_type_accelerators"},
		{"impossible-cast", "[int]'ten'", 1, "", `Cannot convert value "ten" to type "System.Int32".`, about + "about_type_conversion"},
		{"null-method", "$undefined.Trim()", 1, "", "You cannot call a method on a null-valued expression.", about + "about_automatic_variables"},
		{"bad-base64", "[Convert]::FromBase64String('%%%')", 1, "", "The input is not a valid Base-64 string", "https://learn.microsoft.com/en-us/dotnet/api/system.convert.frombase64string"},
		{"expand-missing-property", "Get-Service | Select-Object -First 0\n[pscustomobject]@{ A = 1 } | Select-Object -ExpandProperty Hash", 1, "", `Property "Hash" cannot be found.`, "https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.utility/select-object?view=powershell-5.1"},
		// Providers.
		{"missing-drive", "Get-Content -Path 'Q:\\x.txt'", 1, "", "Cannot find drive. A drive with the name 'Q' does not exist.", about + "about_providers"},
		{"missing-file", "Get-Content -Path 'C:\\nope.txt'", 1, "", "Cannot find path 'C:\\nope.txt' because it does not exist.", mgmt + "get-content?view=powershell-5.1"},
		{"missing-registry-key", "Get-ItemProperty -Path 'HKLM:\\SOFTWARE\\Nope'", 1, "", "Cannot find path 'HKLM:\\SOFTWARE\\Nope' because it does not exist.", about + "about_registry_provider"},
		{"registry-current-build", "(Get-ItemProperty -Path 'HKLM:\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion').CurrentBuild", 0, "20348", "", about + "about_registry_provider"},
		{"set-content-missing-dir", "Set-Content -Path 'C:\\nodir\\x.txt' -Value 'x'", 1, "", "Could not find a part of the path", mgmt + "set-content?view=powershell-5.1"},
		// Services and features.
		{"get-service-missing", "Get-Service nosuch", 1, "", "Cannot find any service with service name 'nosuch'.", mgmt + "get-service?view=powershell-5.1"},
		{"start-service-missing", "Start-Service -Name 'nosuch'", 1, "", "Cannot find any service with service name 'nosuch'.", mgmt + "start-service?view=powershell-5.1"},
		{"start-disabled-service", "New-Service -Name 'dis' -BinaryPathName 'C:\\x.exe' -DisplayName 'Dis' -StartupType Disabled | Out-Null\nStart-Service -Name 'dis'", 1, "", "Service 'Dis (dis)' cannot be started due to the following error: Cannot start service dis on computer '.'.", mgmt + "start-service?view=powershell-5.1"},
		{"install-unknown-feature", "Install-WindowsFeature -Name 'No-Such-Feature'", 1, "", "The role, role service, or feature name is not valid: 'No-Such-Feature'.", "https://learn.microsoft.com/en-us/powershell/module/servermanager/install-windowsfeature"},
		{"firewall-profile-and-address-stored", "New-NetFirewallRule -DisplayName 'k' -Name 'fw-k' -LocalPort 10250 -Protocol TCP -Profile 'Public,Domain' -RemoteAddress 'LocalSubnet','10.0.0.0/8' | Out-Null\n$r = Get-NetFirewallRule -Name 'fw-k'\n\"$($r.Profile)|$($r.RemoteAddress -join ';')\"", 0, "Domain, Public|LocalSubnet;10.0.0.0/8", "", "https://learn.microsoft.com/en-us/powershell/module/netsecurity/new-netfirewallrule (-Profile, -RemoteAddress)"},
		{"firewall-profile-default-any", "New-NetFirewallRule -DisplayName 'd' -Name 'fw-d' -LocalPort 1 -Protocol TCP | Out-Null\n$r = Get-NetFirewallRule -Name 'fw-d'\n\"$($r.Profile)|$($r.RemoteAddress)\"", 0, "Any|Any", "", "https://learn.microsoft.com/en-us/powershell/module/netsecurity/new-netfirewallrule (The default value is Any)"},
		{"firewall-bad-profile", "New-NetFirewallRule -DisplayName 'x' -Profile 'Domain,Work'", 1, "", "Unable to match the identifier name Work to a valid enumerator name.", "https://learn.microsoft.com/en-us/powershell/module/netsecurity/new-netfirewallrule (Any, Domain, Private, Public, NotApplicable)"},
		{"firewall-profile-notapplicable-unmodelled", "New-NetFirewallRule -DisplayName 'x' -Profile NotApplicable", 1, "", "SimulatorNotModelled", "https://learn.microsoft.com/en-us/powershell/module/netsecurity/new-netfirewallrule (NotApplicable is real; not modelled)"},
		{"firewall-address-keyword-unmodelled", "New-NetFirewallRule -DisplayName 'x' -RemoteAddress DefaultGateway", 1, "", "SimulatorNotModelled", "https://learn.microsoft.com/en-us/powershell/module/netsecurity/new-netfirewallrule (keyword DefaultGateway is real; not modelled)"},
		{"firewall-address-garbage-refused", "New-NetFirewallRule -DisplayName 'x' -RemoteAddress 'not-an-address'", 1, "", "SimulatorNotModelled", "(simulator: Windows' message for an invalid address is not known here; refused)"},
		{"firewall-set-scopes-and-enables", "New-NetFirewallRule -DisplayName 'k' -Name 'fw-s' -LocalPort 10250 -Protocol TCP -Enabled False | Out-Null\n$admit = @('10.0.0.10', '10.244.0.0/16')\nSet-NetFirewallRule -Name 'fw-s' -RemoteAddress $admit -Enabled True\n$r = Get-NetFirewallRule -Name 'fw-s'\n\"$($r.Enabled)|$($r.RemoteAddress -join ';')\"", 0, "True|10.0.0.10;10.244.0.0/16", "", "https://learn.microsoft.com/en-us/powershell/module/netsecurity/set-netfirewallrule (-RemoteAddress, -Enabled)"},
		{"firewall-set-missing", "Set-NetFirewallRule -Name 'nope' -Enabled True", 1, "", "No MSFT_NetFirewallRule objects found with property 'Name' equal to 'nope'.", "https://learn.microsoft.com/en-us/powershell/module/netsecurity/set-netfirewallrule"},
		{"firewall-set-served-port-unmodelled", "New-NetFirewallRule -DisplayName 's' -Name 'fw-ssh' -LocalPort 22 -Protocol TCP | Out-Null\nSet-NetFirewallRule -Name 'fw-ssh' -RemoteAddress '10.0.0.1'", 1, "", "SimulatorNotModelled", "(simulator: Windows applies a changed rule at once; the host reads its served ports' rules at boot)"},
		{"firewall-set-other-parameter-unmodelled", "Set-NetFirewallRule -Name 'x' -LocalPort 1", 1, "", "SimulatorNotModelled", "https://learn.microsoft.com/en-us/powershell/module/netsecurity/set-netfirewallrule (-LocalPort is real; not modelled)"},
		{"firewall-rule-missing", "Get-NetFirewallRule -Name 'nope'", 1, "", "No MSFT_NetFirewallRule objects found with property 'Name' equal to 'nope'.", "https://learn.microsoft.com/en-us/powershell/module/netsecurity/get-netfirewallrule"},
		// Code, not text.
		{"comment-does-nothing", "# Restart-Computer -Force\nWrite-Output 'still here'", 0, "still here", "", about + "about_comments"},
		{"string-is-just-a-string", "$s = 'Stop-Service x'\n$s", 0, "Stop-Service x", "", about + "about_quoting_rules"},
		{"syntax-error-runs-nothing", "Write-Output 'first'\nif ($true {", 1, "", "ParserError", about + "about_parsing"},
		// The language the bootstrap uses, answered correctly.
		{"subexpression", "$n = 3\n\"n+1=$($n + 1) on $env:COMPUTERNAME\"", 0, "n+1=4 on WIN-TEST", "", about + "about_quoting_rules"},
		{"lastexitcode-under-stop", "$ErrorActionPreference = 'Stop'\ncmd /c exit 3\nWrite-Output \"exit=$LASTEXITCODE\"", 0, "exit=3", "", about + "about_automatic_variables#lastexitcode (native exit codes do not stop 5.1)"},
		{"dollar-question-native", "cmd /c exit 3\n$?", 0, "False", "", about + "about_automatic_variables"},
		{"where-object", "@(1, 2, 3, 4) | Where-Object { $_ -gt 2 } | ForEach-Object { \"v$_\" }", 0, "v3\r\nv4", "", "https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/where-object?view=powershell-5.1"},
		{"foreach", "$t = 0\nforeach ($i in @(1, 2, 3)) { $t += $i }\n$t", 0, "6", "", about + "about_foreach"},
		{"hashtable", "$h = @{ port = 10250 }\n$h['Port'] + 1", 0, "10251", "", about + "about_hash_tables"},
		{"join", "@('a', 'b', 'c') -join '-'", 0, "a-b-c", "", about + "about_join"},
		{"format", "'{0}:{1}' -f 'node', 10250", 0, "node:10250", "", about + "about_operators#format-operator--f"},
		{"try-catch-underscore", "try { Get-Service -Name 'nosuch' -ErrorAction Stop } catch { \"caught: $($_.Exception.Message)\" }", 0, "caught: Cannot find any service with service name 'nosuch'.", "", about + "about_try_catch_finally"},
		{"try-does-not-catch-nonterminating", "try { Get-Service -Name 'nosuch' } catch { 'caught' }\n'after'", 0, "after", "Cannot find any service", about + "about_try_catch_finally"},
		{"throw-exit-1", "throw 'boom'", 1, "", "boom", about + "about_throw"},
		{"exit-code", "exit 7", 7, "", "", about + "about_language_keywords#exit"},
		{"native-not-executable", setup + "Set-Content -Path 'C:\\k\\fake.exe' -Value 'not a program'\n& 'C:\\k\\fake.exe'", 1, "", "The specified executable is not a valid application for this OS platform.", "https://learn.microsoft.com/en-us/windows/win32/debug/system-error-codes--0-499- (ERROR_BAD_EXE_FORMAT 193)"},
		{"native-missing", "& 'C:\\k\\missing.exe' --version", 1, "", "The term 'C:\\k\\missing.exe' is not recognized", about + "about_command_precedence"},
		{"icacls-bad-grant", setup + "Set-Content -Path 'C:\\k\\f.txt' -Value 'x'\nicacls.exe 'C:\\k\\f.txt' /grant 'Administrators=F'\n$LASTEXITCODE", 0, "87", "Invalid parameter", "https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/icacls"},
		{"hnsdiag-detail-flags", "hnsdiag.exe list all -d\n$LASTEXITCODE", 0, "1", "does not model hnsdiag list all -d", "https://github.com/microsoft/SDN/blob/master/Kubernetes/windows/kubeadm/Kubecluster.md"},
		{"hnsdiag-delete", "hnsdiag.exe delete loadbalancers 3599612c-54b4-4b9d-9258-4fc5e2100549\n$LASTEXITCODE", 0, "1", "does not model hnsdiag delete", "https://github.com/kubernetes/kubernetes/issues/135802"},
		{"get-hnspolicylist-parameter", "Get-HnsPolicyList -Id 'x'", 1, "", "A parameter cannot be found that matches parameter name 'Id'", "https://learn.microsoft.com/en-us/powershell/module/hostnetworkingservice/"},
		{"tar-missing-archive", "tar.exe -xzf 'C:\\nope.tgz' -C 'C:\\Windows\\Temp'\n$LASTEXITCODE", 0, "1", "Failed to open", "https://learn.microsoft.com/en-us/virtualization/community/team-blog/2017/20171219-tar-and-curl-come-to-windows"},
		// Native stderr in 5.1: redirected (2>&1, 2>$null) each line is a
		// NativeCommandError record and Stop ends the script at the first;
		// not redirected it goes to the console and is no error (7.1 changed
		// the former, PowerShell/PowerShell#13361, fixing #3996).
		{"native-stderr-merged-under-stop", "$ErrorActionPreference = 'Stop'\ncmd /c \"echo oops 1>&2\" 2>&1\n'after'", 1, "", "NativeCommandError", "https://github.com/PowerShell/PowerShell/pull/13361"},
		{"native-stderr-discarded-under-stop", "$ErrorActionPreference = 'Stop'\ncmd /c \"echo oops 1>&2\" 2>$null\n'after'", 1, "", "NativeCommandError", "https://github.com/PowerShell/PowerShell/issues/3996"},
		{"native-stderr-unredirected-no-error", "$ErrorActionPreference = 'Stop'\ncmd /c \"echo oops 1>&2\"\n'after'", 0, "after", "oops", "https://github.com/PowerShell/PowerShell/pull/13361"},
		{"cmd-ampersand", "cmd /c \"echo a & echo b\"", 0, "a \r\nb", "", "https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/cmd (&)"},
		{"cmd-and-skips-after-failure", "cmd /c \"exit /b 3 && echo no\"\n$LASTEXITCODE", 0, "3", "", "https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/cmd (&&)"},
		{"cmd-or-runs-after-failure", "cmd /c \"type C:\\nope.txt || echo recovered\"\n$LASTEXITCODE", 0, "recovered\r\n0", "", "https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/cmd (||)"},
		{"cmd-caret-escapes", "cmd /c \"echo a ^& b\"", 0, "a & b", "", "https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/echo (^ escapes)"},
		{"cmd-mkdir-existing", setup + "cmd /c \"mkdir C:\\k\"\n$LASTEXITCODE", 0, "1", "A subdirectory or file C:\\k already exists.", "https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/mkdir"},
		{"cmd-mkdir-or-continue", setup + "cmd /c \"mkdir C:\\k || echo exists\"\n$LASTEXITCODE", 0, "exists\r\n0", "", "https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/mkdir"},
		{"cmd-pipe-refused", "cmd /c \"echo a | more\"\n$LASTEXITCODE", 0, "1", "does not model a pipe", "https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/cmd (| is real; not modelled)"},
		{"cmd-block-refused", "cmd /c \"(echo a) & echo b\"\n$LASTEXITCODE", 0, "1", "does not model a parenthesised block", "https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/cmd (( ) is real; not modelled)"},
		// Hash literals: keys are case-insensitive, a duplicate is an error.
		{"duplicate-hash-key-parse", "Write-Output 'ran'\n$h = @{ a = 1; A = 2 }", 1, "", "Duplicate keys 'A' are not allowed in hash literals.", "https://github.com/PowerShell/PowerShell/blob/master/src/System.Management.Automation/engine/parser/SemanticChecks.cs (VisitHashtable)"},
		{"duplicate-hash-key-runtime", "$k = 'a'\n$h = @{ $k = 1; A = 2 }", 1, "", "Duplicate keys 'A' are not allowed in hash literals.", "https://github.com/PowerShell/PowerShell/blob/master/src/System.Management.Automation/engine/runtime/Operations/MiscOps.cs (HashtableOps.AddKeyValuePair)"},
		// Copy-Item and Move-Item need the destination's directory.
		{"copy-item-missing-dir", setup + "Set-Content -Path 'C:\\k\\a.txt' -Value 'x'\nCopy-Item -Path 'C:\\k\\a.txt' -Destination 'C:\\nodir\\a.txt'", 1, "", "Could not find a part of the path 'C:\\nodir\\a.txt'.", "https://github.com/PowerShell/PowerShell/blob/master/src/System.Management.Automation/namespaces/FileSystemProvider.cs (CopyFileInfoItemIOError)"},
		{"move-item-missing-dir", setup + "Set-Content -Path 'C:\\k\\b.txt' -Value 'x'\nMove-Item -Path 'C:\\k\\b.txt' -Destination 'C:\\nodir\\b.txt'", 1, "", "Could not find a part of the path 'C:\\nodir\\b.txt'.", "https://github.com/PowerShell/PowerShell/blob/master/src/System.Management.Automation/namespaces/FileSystemProvider.cs (MoveFileInfoItemIOError)"},
		// Numeric conversions: overflow fails, a double rounds half to even.
		{"int-overflow-number", "[int]3000000000", 1, "", `Cannot convert value "3000000000" to type "System.Int32". Error: "Value was either too large or too small for an Int32."`, "https://github.com/PowerShell/PowerShell/blob/master/src/System.Management.Automation/engine/LanguagePrimitives.cs (ConvertNumeric)"},
		{"int-overflow-string", "[int]'3000000000'", 1, "", `Cannot convert value "3000000000" to type "System.Int32". Error: "Value was either too large or too small for an Int32."`, "https://github.com/PowerShell/PowerShell/blob/master/src/System.Management.Automation/engine/LanguagePrimitives.cs (ConvertStringToInteger)"},
		{"byte-overflow", "[byte]256", 1, "", "Value was either too large or too small for an unsigned byte.", about + "about_type_conversion"},
		{"long-overflow-string", "[long]'99999999999999999999'", 1, "", "Value was either too large or too small for an Int64.", "https://github.com/PowerShell/PowerShell/blob/master/src/System.Management.Automation/engine/LanguagePrimitives.cs (ConvertStringToInteger)"},
		{"int-rounds-half-to-even", "[int]2.5\n[int]3.5\n[int]'2.5'\n[int]-2.5", 0, "2\r\n4\r\n2\r\n-2", "", "https://learn.microsoft.com/en-us/dotnet/api/system.convert.toint32#system-convert-toint32(system-double)"},
		// The automatic variables and environment every session has.
		{"psversiontable", "$PSVersionTable.PSVersion.Major\n$PSVersionTable.PSVersion.Minor\n$PSVersionTable.PSVersion.ToString()\n$PSVersionTable.PSEdition\n$PSVersionTable.BuildVersion.ToString()", 0, "5\r\n1\r\n5.1.20348.2340\r\nDesktop\r\n10.0.20348.2340", "", about + "about_automatic_variables?view=powershell-5.1#psversiontable"},
		{"psversiontable-protocols", "$t = $PSVersionTable\n$t.WSManStackVersion.ToString(); $t.PSRemotingProtocolVersion.ToString(); $t.SerializationVersion.ToString(); $t.CLRVersion.ToString(); $t.PSCompatibleVersions.Count", 0, "3.0\r\n2.3\r\n1.1.0.1\r\n4.0.30319.42000\r\n6", "", about + "about_automatic_variables?view=powershell-5.1#psversiontable"},
		{"pshome-host-profile", "$PSHOME\n$Host.Name\n$PROFILE", 0, "C:\\Windows\\System32\\WindowsPowerShell\\v1.0\r\nConsoleHost\r\nC:\\Users\\Administrator\\Documents\\WindowsPowerShell\\Microsoft.PowerShell_profile.ps1", "", about + "about_profiles?view=powershell-5.1; ConsoleHost.cs (Name) in github.com/PowerShell/PowerShell"},
		{"env-basics", "$env:SystemRoot; $env:windir; $env:ProgramFiles; $env:ProgramData; $env:OS; $env:PROCESSOR_ARCHITECTURE; $env:NUMBER_OF_PROCESSORS", 0, "C:\\Windows\r\nC:\\Windows\r\nC:\\Program Files\r\nC:\\ProgramData\r\nWindows_NT\r\nAMD64\r\n2", "", about + "about_environment_variables?view=powershell-5.1"},
		{"preference-defaults", "$ProgressPreference\n$VerbosePreference\n$ConfirmPreference", 0, "Continue\r\nSilentlyContinue\r\nHigh", "", about + "about_preference_variables?view=powershell-5.1"},
		{"undefined-variable-is-null", "$neverSet -eq $null", 0, "True", "", about + "about_variables?view=powershell-5.1"},
		{"unmodelled-automatic-variable", "$PID", 1, "", "does not model the automatic variable $pid", about + "about_automatic_variables?view=powershell-5.1#pid"},
		// .NET members: each real one the engine does not model is refused.
		{"unmodelled-static-property", "[Environment]::UserDomainName", 1, "", "does not model the static property [System.Environment]::UserDomainName", "https://learn.microsoft.com/en-us/dotnet/api/system.environment.userdomainname"},
		{"unmodelled-static-method", "[string]::IsNullOrEmpty('')", 1, "", "does not model [System.String]::IsNullOrEmpty", "https://learn.microsoft.com/en-us/dotnet/api/system.string.isnullorempty"},
		{"unmodelled-instance-property", "[Environment]::OSVersion.Version.MajorRevision", 1, "", "does not model the property [System.Version].MajorRevision", "https://learn.microsoft.com/en-us/dotnet/api/system.version.majorrevision"},
		{"unmodelled-instance-method", "(1).CompareTo(2)", 1, "", "does not model the method [System.Int32].CompareTo()", "https://learn.microsoft.com/en-us/dotnet/api/system.int32.compareto"},
		{"encoding-ascii", "[Text.Encoding]::ASCII.GetBytes('a\u00e9') -join ','", 0, "97,63", "", "https://learn.microsoft.com/en-us/dotnet/api/system.text.encoding.ascii"},
		{"encoding-unicode", "[Text.Encoding]::Unicode.GetBytes('ab') -join ','\n[Text.Encoding]::Unicode.GetString([Text.Encoding]::Unicode.GetBytes('hi'))", 0, "97,0,98,0\r\nhi", "", "https://learn.microsoft.com/en-us/dotnet/api/system.text.encoding.unicode"},
		// File encodings of Windows PowerShell 5.1 (about_Character_Encoding, 5.1: "Character encoding in Windows PowerShell").
		{"redirect-utf16le-bom", setup + "'\u00e9' > 'C:\\k\\r.txt'\n[IO.File]::ReadAllBytes('C:\\k\\r.txt') -join ','", 0, "255,254,233,0,13,0,10,0", "", about + "about_redirection?view=powershell-5.1"},
		{"redirect-append-no-second-bom", setup + "'a' > 'C:\\k\\a.txt'\n'b' >> 'C:\\k\\a.txt'\n[IO.File]::ReadAllBytes('C:\\k\\a.txt') -join ','", 0, "255,254,97,0,13,0,10,0,98,0,13,0,10,0", "", "https://learn.microsoft.com/en-us/dotnet/api/system.io.streamwriter (preamble at position 0 only)"},
		{"set-content-default-ansi", setup + "Set-Content -Path 'C:\\k\\s.txt' -Value '\u00e9\u20ac' -NoNewline\n[IO.File]::ReadAllBytes('C:\\k\\s.txt') -join ','", 0, "233,128", "", about + "about_character_encoding?view=powershell-5.1 (Set-Content: Default, the ANSI code page 1252)"},
		{"set-content-utf8-bom", setup + "Set-Content -Path 'C:\\k\\u.txt' -Value 'a' -NoNewline -Encoding UTF8\n[IO.File]::ReadAllBytes('C:\\k\\u.txt') -join ','", 0, "239,187,191,97", "", about + "about_character_encoding?view=powershell-5.1 (UTF8: with BOM)"},
		{"set-content-string-is-utf16", setup + "Set-Content -Path 'C:\\k\\w.txt' -Value 'a' -NoNewline -Encoding String\n[IO.File]::ReadAllBytes('C:\\k\\w.txt') -join ','", 0, "255,254,97,0", "", "https://github.com/PowerShell/PowerShell/blob/v6.0.0/src/System.Management.Automation/namespaces/FileSystemProvider.cs (GetEncodingFromEnum: String -> Unicode)"},
		{"set-content-oem-437", setup + "Set-Content -Path 'C:\\k\\o.txt' -Value '\u00e9' -NoNewline -Encoding Oem\n[IO.File]::ReadAllBytes('C:\\k\\o.txt') -join ','", 0, "130", "", about + "about_character_encoding?view=powershell-5.1 (OEM: the console code page, 437)"},
		{"set-content-utf7-unmodelled", setup + "Set-Content -Path 'C:\\k\\7.txt' -Value 'a' -Encoding UTF7", 1, "", "SimulatorNotModelled", mgmt + "set-content?view=powershell-5.1 (UTF7 is real; not modelled)"},
		{"writealltext-no-bom", setup + "[IO.File]::WriteAllText('C:\\k\\t.txt', '\u00e9')\n[IO.File]::ReadAllBytes('C:\\k\\t.txt') -join ','", 0, "195,169", "", "https://learn.microsoft.com/en-us/dotnet/api/system.io.file.writealltext (UTF-8 without a Byte-Order Mark)"},
		{"writealltext-encoding-utf8-bom", setup + "[IO.File]::WriteAllText('C:\\k\\b.txt', 'a', [Text.Encoding]::UTF8)\n[IO.File]::WriteAllText('C:\\k\\n.txt', 'a', [Text.UTF8Encoding]::new($false))\n([IO.File]::ReadAllBytes('C:\\k\\b.txt') -join ',') + '|' + ([IO.File]::ReadAllBytes('C:\\k\\n.txt') -join ',')", 0, "239,187,191,97|97", "", "https://learn.microsoft.com/en-us/dotnet/api/system.text.utf8encoding.-ctor"},
		{"writealltext-encoding-name-refused", setup + "[IO.File]::WriteAllText('C:\\k\\x.txt', 'a', 'UTF8')", 1, "", "to type \"System.Text.Encoding\"", "https://learn.microsoft.com/en-us/dotnet/api/system.io.file.writealltext"},
		{"get-content-reads-utf16", setup + "'hi' > 'C:\\k\\g.txt'\n(Get-Content -Path 'C:\\k\\g.txt') + '|' + [IO.File]::ReadAllText('C:\\k\\g.txt')", 0, "hi|hi\r\n", "", "https://learn.microsoft.com/en-us/dotnet/api/system.io.streamreader.-ctor (detectEncodingFromByteOrderMarks)"},
		{"get-content-bomless-is-ansi", setup + "[IO.File]::WriteAllText('C:\\k\\m.txt', '\u00e9')\n(Get-Content -Path 'C:\\k\\m.txt' -Raw) -eq '\u00c3\u00a9'", 0, "True", "", about + "about_character_encoding?view=powershell-5.1 (Get-Content without a BOM: Default)"},
		// Out-File (5.1): unicode by default, -Encoding, -Append, -NoNewline.
		{"out-file-default-utf16le-bom", setup + "'\u00e9' | Out-File -FilePath 'C:\\k\\of1.txt'\n[IO.File]::ReadAllBytes('C:\\k\\of1.txt') -join ','", 0, "255,254,233,0,13,0,10,0", "", of51 + " (-Encoding: The default value is unicode)"},
		{"out-file-utf8-bom", setup + "'a' | Out-File -FilePath 'C:\\k\\of2.txt' -Encoding utf8\n[IO.File]::ReadAllBytes('C:\\k\\of2.txt') -join ','", 0, "239,187,191,97,13,10", "", about + "about_character_encoding?view=powershell-5.1 (UTF8: with BOM)"},
		{"out-file-ascii-positional-encoding", setup + "'a\u00e9' | Out-File 'C:\\k\\of3.txt' ascii\n[IO.File]::ReadAllBytes('C:\\k\\of3.txt') -join ','", 0, "97,63,13,10", "", of51 + " (-Encoding position 1; ascii replaces with ?)"},
		{"out-file-oem-and-default", setup + "'\u00e9' | Out-File -FilePath 'C:\\k\\of4.txt' -Encoding oem\n'\u00e9' | Out-File -FilePath 'C:\\k\\of5.txt' -Encoding default\n([IO.File]::ReadAllBytes('C:\\k\\of4.txt') -join ',') + '|' + ([IO.File]::ReadAllBytes('C:\\k\\of5.txt') -join ',')", 0, "130,13,10|233,13,10", "", about + "about_character_encoding?view=powershell-5.1 (OEM 437, Default 1252)"},
		{"out-file-append-no-second-bom", setup + "'a' | Out-File -FilePath 'C:\\k\\of6.txt'\n'b' | Out-File -FilePath 'C:\\k\\of6.txt' -Append\n[IO.File]::ReadAllBytes('C:\\k\\of6.txt') -join ','", 0, "255,254,97,0,13,0,10,0,98,0,13,0,10,0", "", of51 + " (-Append)"},
		{"out-file-nonewline", setup + "'a', 'b' | Out-File -FilePath 'C:\\k\\of7.txt' -Encoding ascii -NoNewline\n[IO.File]::ReadAllBytes('C:\\k\\of7.txt') -join ','", 0, "97,98", "", of51 + " (-NoNewline: concatenated, no newline)"},
		{"out-file-objects-as-console", setup + "@(1, 2) | Out-File -FilePath 'C:\\k\\of8.txt' -Encoding ascii\n[IO.File]::ReadAllText('C:\\k\\of8.txt')", 0, "1\r\n2\r\n", "", of51 + " (the display representation)"},
		{"out-file-no-directory", "'a' | Out-File -FilePath 'C:\\nodir\\x.txt'", 1, "", "Could not find a part of the path 'C:\\nodir\\x.txt'.", of51 + " (it does not create directories)"},
		{"redirect-no-directory", "'a' > 'C:\\nodir2\\x.txt'\nTest-Path -Path 'C:\\nodir2'", 0, "False", "Could not find a part of the path 'C:\\nodir2\\x.txt'.", about + "about_redirection?view=powershell-5.1 (as Out-File: no directory is created)"},
		{"out-file-width-unmodelled", setup + "'a' | Out-File -FilePath 'C:\\k\\w.txt' -Width 10", 1, "", "SimulatorNotModelled", of51 + " (-Width is real; not modelled)"},
		{"out-file-utf7-unmodelled", setup + "'a' | Out-File -FilePath 'C:\\k\\u7.txt' -Encoding utf7", 1, "", "SimulatorNotModelled", of51 + " (utf7 is real; not modelled)"},
		{"out-file-bad-encoding", setup + "'a' | Out-File -FilePath 'C:\\k\\b.txt' -Encoding latin1", 1, "", "does not belong to the set", of51 + " (5.1 ValidateSet)"},
		{"out-file-append-to-ansi-unmodelled", setup + "Set-Content -Path 'C:\\k\\ansi.txt' -Value 'x'\n'b' | Out-File -FilePath 'C:\\k\\ansi.txt' -Append", 1, "", "SimulatorNotModelled", of51 + " (-Append without -Encoding: 5.1 looks at the file's encoding; not modelled)"},
		// Set-StrictMode: -Off leaves strict mode off; -Version is not modelled.
		{"set-strictmode-version-unmodelled", "Set-StrictMode -Version Latest\n$undefined", 1, "", "SimulatorNotModelled", about + "about_strict_mode?view=powershell-5.1 (-Version is real; not modelled)"},
		{"set-strictmode-off", "Set-StrictMode -Off\n\"[$undefined]\"", 0, "[]", "", "https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/set-strictmode?view=powershell-5.1 (-Off; strict mode is off by default)"},
		// Parameter binding: parameter sets, arrays, duplicates, redirections
		// (about_Parameter_Sets; CmdletParameterBinderController.cs).
		{"path-with-literalpath", "Remove-Item -Path 'C:\\a' -LiteralPath 'C:\\b'", 1, "", "Parameter set cannot be resolved using the specified named parameters.", about + "about_parameter_sets?view=powershell-5.1"},
		{"services-name-and-displayname", "Start-Service -Name 'a' -DisplayName 'b'", 1, "", "AmbiguousParameterSet", mgmt + "start-service?view=powershell-5.1 (sets Default, DisplayName, InputObject)"},
		{"sleep-seconds-and-ms", "Start-Sleep -Seconds 1 -Milliseconds 5", 1, "", "AmbiguousParameterSet", "https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.utility/start-sleep?view=powershell-5.1 (sets Seconds, Milliseconds)"},
		{"sleep-default-set-mandatory", "Start-Sleep", 1, "", "Cannot process command because of one or more missing mandatory parameters: Seconds.", "https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.utility/start-sleep?view=powershell-5.1"},
		{"parameter-twice", "Get-Service -Name 'a' -Name 'b'", 1, "", "Cannot bind parameter because parameter 'Name' is specified more than once.", "https://github.com/PowerShell/PowerShell/blob/master/src/System.Management.Automation/engine/ParameterBinderController.cs (ParameterAlreadyBound)"},
		{"array-to-string-parameter", "Get-FileHash -Algorithm 'SHA1','MD5' -LiteralPath 'C:\\x'", 1, "", "Cannot convert 'System.Object[]' to the type 'System.String' required by parameter 'Algorithm'. Specified method is not supported.", "https://github.com/PowerShell/PowerShell/blob/master/src/System.Management.Automation/engine/ParameterBinderBase.cs (CoerceTypeAsNeeded, CannotConvertArgument)"},
		{"array-path-binds-each", setup + "Set-Content -Path 'C:\\k\\p1.txt','C:\\k\\p2.txt' -Value 'x'\nTest-Path -Path 'C:\\k\\p1.txt','C:\\k\\p2.txt'\nRemove-Item -Path 'C:\\k\\p1.txt','C:\\k\\p2.txt'\nTest-Path -LiteralPath 'C:\\k\\p1.txt','C:\\k\\p2.txt'", 0, "True\r\nTrue\r\nFalse\r\nFalse", "", mgmt + "remove-item?view=powershell-5.1 (-Path <String[]>)"},
		{"new-item-name-set", setup + "New-Item -Path 'C:\\k' -Name 'sub' -ItemType Directory | Out-Null\nTest-Path -Path 'C:\\k\\sub' -PathType Container", 0, "True", "", mgmt + "new-item?view=powershell-5.1 (nameSet)"},
		{"cmdlet-2>null-after-argument", "Remove-Item -Path C:\\nope 2>$null\n\"ok=$? errors=$($Error.Count)\"", 0, "ok=False errors=1", "", about + "about_redirection?view=powershell-5.1"},
		{"cmdlet-2>null-hides-error", "Get-Service 'nosuch' 2>$null\n'after'", 0, "after", noStderr, about + "about_redirection?view=powershell-5.1"},
		{"cmdlet-2>&1-merges", "Get-Service 'nosuch' 2>&1 | ForEach-Object { \"got: $_\" }\n'end'", 0, "got: Cannot find any service with service name 'nosuch'.", "", about + "about_redirection?view=powershell-5.1"},
		{"cmdlet-2>null-does-not-stop-stop", "Get-Service 'nosuch' -ErrorAction Stop 2>$null\n'not reached'", 1, "", "NoServiceFoundForGivenName", about + "about_commonparameters?view=powershell-5.1 (-ErrorAction Stop: terminating, not written to the error stream)"},
		{"cmdlet-error-to-file-refused", "Remove-Item -Path 'C:\\nope.txt' 2> 'C:\\err.txt'", 1, "", "SimulatorNotModelled", about + "about_redirection?view=powershell-5.1 (2> file is real; not modelled)"},
		{"processor-count", "[Environment]::ProcessorCount", 0, "2", "", "https://learn.microsoft.com/en-us/dotnet/api/system.environment.processorcount"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// source: tc.source
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			stdout, stderr, code, err := client.RunPSWithContext(ctx, tc.script)
			if err != nil {
				t.Fatal(err)
			}
			stderr = decodeCLIXML(stderr)
			if tc.stderr == noStderr && stderr != "" {
				t.Errorf("stderr %q; want none (source: %s)", stderr, tc.source)
			}
			if code != tc.code || !strings.Contains(stdout, tc.stdout) || (tc.stderr != noStderr && !strings.Contains(stderr, tc.stderr)) {
				t.Errorf("exit %d stdout %q stderr %q\nwant exit %d, stdout containing %q, stderr containing %q (source: %s)", code, stdout, stderr, tc.code, tc.stdout, tc.stderr, tc.source)
			}
		})
	}
}

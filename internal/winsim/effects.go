package winsim

import (
	"regexp"
	"strings"
)

// StepComment marks a named step in a script: a line "# step: install-kubelet".
// Fault injection (StepFault.Step) and scripts.log use the name; the bootstrap
// writes one such line at the top of every step.
const StepComment = "# step: "

// psArg matches one argument of a .NET call: a quoted literal or a variable.
const psArg = `('(?:[^']|'')*'|"(?:[^"` + "`" + `]|` + "`" + `.)*"|\$[\w:]+)`

// Statement shapes that are not cmdlets: .NET calls the bootstrap may use.
var (
	// WriteAllBytesRE: [IO.File]::WriteAllBytes('<path>', [Convert]::FromBase64String('<base64>'))
	WriteAllBytesRE = regexp.MustCompile(`(?i)^\[(?:System\.)?IO\.File\]::WriteAllBytes\(\s*` + psArg + `\s*,\s*\[(?:System\.)?Convert\]::FromBase64String\(\s*` + psArg + `\s*\)\s*\)$`)
	// WriteAllTextRE: [IO.File]::WriteAllText('<path>', '<text>')
	WriteAllTextRE = regexp.MustCompile(`(?i)^\[(?:System\.)?IO\.File\]::WriteAllText\(\s*` + psArg + `\s*,\s*` + psArg + `\s*\)$`)
	// FileExistsRE: [IO.File]::Exists('<path>') -> True/False
	FileExistsRE = regexp.MustCompile(`(?i)^\[(?:System\.)?IO\.File\]::Exists\(\s*` + psArg + `\s*\)$`)
	// CreateDirectoryRE: [IO.Directory]::CreateDirectory('<path>')
	CreateDirectoryRE = regexp.MustCompile(`(?i)^\[(?:System\.)?IO\.Directory\]::CreateDirectory\(\s*` + psArg + `\s*\)$`)
	// OSVersionRE: [Environment]::OSVersion.Version[.ToString()] -> "10.0.20348.0"
	OSVersionRE = regexp.MustCompile(`(?i)^\[(?:System\.)?Environment\]::OSVersion\.Version(?:\.ToString\(\))?$`)
	// MachineNameRE: [Environment]::MachineName -> the computer name
	MachineNameRE = regexp.MustCompile(`(?i)^\[(?:System\.)?Environment\]::MachineName$`)
	// ConsoleWriteRE: [Console]::Error.WriteLine('<text>') / [Console]::Out.WriteLine(...)
	ConsoleWriteRE = regexp.MustCompile(`(?i)^\[(?:System\.)?Console\]::(Error|Out)\.WriteLine\(\s*` + psArg + `\s*\)$`)
)

// CurrentVersionKey is the registry key whose CurrentBuild, CurrentBuildNumber,
// UBR, ProductName, EditionID and DisplayVersion the host reports through
// (Get-ItemProperty -Path '<key>').<Name> or Get-ItemPropertyValue -Path '<key>' -Name <Name>.
const CurrentVersionKey = `HKLM:\SOFTWARE\Microsoft\Windows NT\CurrentVersion`

// Whole-script shapes: recognised before the script is split into statements.
var (
	// StdinUploadRE is how internal/remote streams a file over WinRM: base64
	// lines on stdin, decoded and appended to the file the script creates:
	//   $f = [IO.File]::Create('<path>'); try { foreach ($l in $input) { ... } } finally { $f.Close() }
	StdinUploadRE = regexp.MustCompile(`(?is)(?:^|[\n;])\s*\$f\s*=\s*\[(?:System\.)?IO\.File\]::Create\(\s*'((?:[^']|'')*)'\s*\)\s*;?\s*try\s*\{\s*foreach\s*\(\s*\$l\s+in\s+\$input\s*\)`)
	// WinrmcpRestoreRE is the restore script of github.com/packer-community/winrmcp
	// (Terraform's and Packer's WinRM upload): it decodes the base64 lines that
	// "echo <chunk> >> %TEMP%\winrmcp-<uuid>.tmp" appended, into the destination.
	WinrmcpRestoreRE = regexp.MustCompile(`(?s)\$tmp_file_path\s*=\s*\[System\.IO\.Path\]::GetFullPath\("([^"]*)"\).*?\$dest_file_path\s*=\s*\[System\.IO\.Path\]::GetFullPath\("([^"]*)"(?:\.Trim\("'"\))?\).*FromBase64String\(\$base64_line\)`)
)

// Command-line shapes (WinRM Command and SSH exec, run by cmd.exe on Windows).
var (
	// PowerShellCmdRE: powershell[.exe] <options> -EncodedCommand|-File|-Command ...
	PowerShellCmdRE = regexp.MustCompile(`(?i)^"?(?:[a-z]:\\[^"]*\\)?(?:powershell|pwsh)(?:\.exe)?"?(?:\s+(.*))?$`)
	// EchoRedirectRE: echo <text> >> "<path>" (append) or > "<path>" (create)
	EchoRedirectRE = regexp.MustCompile(`(?is)^echo(?:\s(.*?))?(>>?)\s*"?([^"<>|]+?)"?\s*$`)
)

// Effect documents one understood statement. The list is the contract between
// the bootstrap scripts and the simulator; doc.go explains each entry and a
// test checks every name appears there.
type Effect struct {
	Name  string // cmdlet or shape name
	Shape string // the form the bootstrap writes
}

// Effects lists the statement shapes the simulator executes. Anything else is
// recorded in scripts.log and succeeds with no output.
var Effects = []Effect{
	{"Set-Content", `Set-Content -Path '<path>' -Value '<text>' [-NoNewline] [-Encoding <e>] [-Force]`},
	{"Add-Content", `Add-Content -Path '<path>' -Value '<text>' [-NoNewline]`},
	{"Get-Content", `Get-Content -Path|-LiteralPath '<path>' [-Raw]`},
	{"WriteAllBytes", `[IO.File]::WriteAllBytes('<path>', [Convert]::FromBase64String('<base64>'))`},
	{"WriteAllText", `[IO.File]::WriteAllText('<path>', '<text>')`},
	{"New-Item", `New-Item -ItemType Directory|File -Force -Path '<path>' [-Value '<text>'] [| Out-Null]`},
	{"Test-Path", `Test-Path [-Path|-LiteralPath] '<path>' -> True|False`},
	{"Remove-Item", `Remove-Item [-Path|-LiteralPath] '<path>' [-Force] [-Recurse] [-ErrorAction SilentlyContinue]`},
	{"Move-Item", `Move-Item [-Path|-LiteralPath] '<src>' -Destination '<dst>' [-Force]`},
	{"Copy-Item", `Copy-Item [-Path|-LiteralPath] '<src>' -Destination '<dst>' [-Force]`},
	{"Get-FileHash", `Get-FileHash -Algorithm SHA256 [-Path|-LiteralPath] '<path>' [| Select-Object -ExpandProperty Hash] | (Get-FileHash ...).Hash`},
	{"New-Service", `New-Service -Name '<name>' -BinaryPathName '<exe and args>' [-DisplayName '<d>'] [-StartupType Automatic|Manual|Disabled]`},
	{"Set-Service", `Set-Service -Name '<name>' -StartupType Automatic|Manual|Disabled`},
	{"Start-Service", `Start-Service [-Name] '<name>'`},
	{"Stop-Service", `Stop-Service [-Name] '<name>' [-Force]`},
	{"Restart-Service", `Restart-Service [-Name] '<name>' [-Force]`},
	{"Get-Service", `Get-Service [-Name] '<name>' [-ErrorAction SilentlyContinue] | (Get-Service ...).Status -> Running|Stopped`},
	{"Remove-Service", `Remove-Service -Name '<name>' | sc.exe delete <name>`},
	{"Restart-Computer", `Restart-Computer [-Force]: the host goes down after the script and comes back after RebootDelay`},
	{"Stop-Computer", `Stop-Computer [-Force] | shutdown.exe /s|/p ... | [& ]'<...>\sysprep.exe' ... /shutdown ... | Start-Process -FilePath '<...>\sysprep.exe' -ArgumentList '... /shutdown ...': the host shuts down after the command and stays down (HostConfig.OnShutdown)`},
	{"Invoke-WebRequest", `Invoke-WebRequest [-UseBasicParsing] -Uri '<url>' -OutFile '<path>': a real HTTP GET from this machine`},
	{"Expand-Archive", `Expand-Archive -Path '<zip>' -DestinationPath '<dir>' [-Force]`},
	{"tar.exe", `tar.exe -xzf '<archive.tar.gz>' -C '<dir>'`},
	{"Get-WindowsFeature", `(Get-WindowsFeature -Name '<name>').Installed -> True|False (.InstallState)`},
	{"Install-WindowsFeature", `Install-WindowsFeature -Name '<name>' -> .RestartNeeded Yes (InstallPending until the next boot) | No`},
	{"exit", `exit <n>`},
	{"throw", `throw '<message>'`},
	{"Write-Output", `Write-Output '<text>' | echo '<text>' | Write-Host '<text>' | '<text>' | $env:NAME`},
	{"Write-Error", `Write-Error '<message>' (CLIXML on stderr under -EncodedCommand)`},
	{"OSVersion", `[Environment]::OSVersion.Version[.ToString()]`},
	{"Get-ItemProperty", `(Get-ItemProperty -Path '` + CurrentVersionKey + `').CurrentBuild|UBR|... | Get-ItemPropertyValue`},
	{"COMPUTERNAME", `$env:COMPUTERNAME | hostname | [Environment]::MachineName`},
	{"if", `if (<condition>) { <statements> } [elseif (...) {...}] [else { <statements> }]`},
	{"variables", `$name = <value or statement>; $ErrorActionPreference = 'Stop'`},
	{"concatenation", `('<text>' + ' ' + (<statement>).<Property>): strings concatenate, numbers add`},
	{"StdinUpload", `$f = [IO.File]::Create('<path>'); try { foreach ($l in $input) { ... } } finally { $f.Close() }`},
	{"WinrmcpRestore", `the packer-community/winrmcp restore script`},
	{"echo-redirect", `echo <text> >> "<path>" (cmd.exe)`},
}

// ShutdownCommand reports whether a command's words (the command, then its
// arguments, quoted or not, in any order) shut Windows down: Stop-Computer,
// shutdown.exe /s (or /p), and sysprep.exe with /shutdown, run directly, with
// the call operator &, or through Start-Process -FilePath/-ArgumentList.
func ShutdownCommand(words []string) bool {
	if len(words) == 0 {
		return false
	}
	var exe string
	var args []string
	for _, w := range words {
		for _, f := range strings.FieldsFunc(w, func(r rune) bool { return r == ' ' || r == ',' || r == '\'' || r == '"' }) {
			if exe == "" && f != "&" && !strings.EqualFold(f, "start-process") && !strings.HasPrefix(f, "-") {
				exe = f
				continue
			}
			args = append(args, strings.ToLower(f))
		}
	}
	base := strings.ToLower(exe[strings.LastIndexAny(exe, `\/`)+1:])
	base = strings.TrimSuffix(base, ".exe")
	has := func(opts ...string) bool {
		for _, a := range args {
			for _, o := range opts {
				if a == o {
					return true
				}
			}
		}
		return false
	}
	switch base {
	case "stop-computer":
		return true
	case "shutdown":
		return has("/s", "-s", "/p", "-p")
	case "sysprep":
		return has("/shutdown", "-shutdown")
	}
	return false
}

package winsim

import "regexp"

// StepComment marks a named step in a script: a line "# step: install-kubelet".
// Fault injection (StepFault.Step) and scripts.log use the name; the bootstrap
// writes one such line at the top of every step.
const StepComment = "# step: "

// CurrentVersionKey is the registry key whose CurrentBuild, CurrentBuildNumber,
// UBR, ProductName, EditionID and DisplayVersion the host reports through
// (Get-ItemProperty -Path '<key>').<Name> or Get-ItemPropertyValue -Path '<key>' -Name <Name>.
const CurrentVersionKey = `HKLM:\SOFTWARE\Microsoft\Windows NT\CurrentVersion`

// WinrmcpRestoreRE recognises the restore script of
// github.com/packer-community/winrmcp (Terraform's and Packer's WinRM upload)
// in scripts.log. The host runs that script with the engine like any other;
// this pattern only lets tests find it in the log.
var WinrmcpRestoreRE = regexp.MustCompile(`(?s)\$tmp_file_path\s*=\s*\[System\.IO\.Path\]::GetFullPath\("([^"]*)"\).*?\$dest_file_path\s*=\s*\[System\.IO\.Path\]::GetFullPath\("([^"]*)"(?:\.Trim\("'"\))?\).*FromBase64String\(\$base64_line\)`)

// Command-line shapes (WinRM Command and SSH exec, run by cmd.exe on Windows).
var (
	// PowerShellCmdRE: powershell[.exe] <options> -EncodedCommand|-File|-Command ...
	PowerShellCmdRE = regexp.MustCompile(`(?i)^"?(?:[a-z]:\\[^"]*\\)?(?:powershell|pwsh)(?:\.exe)?"?(?:\s+(.*))?$`)
	// EchoRedirectRE: echo <text> >> "<path>" (append) or > "<path>" (create)
	EchoRedirectRE = regexp.MustCompile(`(?is)^echo(?:\s(.*?))?(>>?)\s*"?([^"<>|&]+?)"?\s*$`)
	// EchoStderrRE: echo <text> 1>&2 (or >&2), cmd.exe's redirection of
	// standard output to the standard error handle: the text, up to the
	// redirection, goes to stderr.
	EchoStderrRE = regexp.MustCompile(`(?is)^echo(?:\s(.*?))?1?>&2\s*$`)
)

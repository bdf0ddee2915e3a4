// Package remote runs PowerShell on Windows hosts and copies files to them,
// over WinRM (github.com/masterzen/winrm), SSH (golang.org/x/crypto/ssh and
// github.com/pkg/sftp) or vCenter's guest operations (vmtools.go: govmomi's
// guest and guest/toolbox, no network path to the guest), behind one small
// interface, Transport. For vmtools, Connect waits for the guest's readiness
// on vCenter's property collector (GuestOperations.WaitReady) instead of
// dialling.
//
// Connect waits for the guest to come up (retrying with exponential backoff
// until the context's deadline), then proves the session with a trivial
// command. Errors name the host, the port, the step that failed (dial, TLS,
// auth, host key, command) and what to check.
//
// Scripts: short scripts run inline as powershell.exe -EncodedCommand; a
// script whose command line would pass cmd.exe's 8,191-character limit is
// uploaded to C:\Windows\Temp and run with -File. PowerShell's CLIXML error
// stream is decoded to text, and a non-zero exit code is an *ExitError
// carrying the code and the last lines of output.
//
// Uploads are idempotent: when the destination already has the expected
// SHA-256 nothing is sent. Otherwise the file goes to a temporary name next to
// the destination (WinRM: base64 lines on the command's stdin, in WinRM Send
// requests of ~150 KB; SSH: SFTP), its SHA-256 is checked on the host, and it
// is moved into place.
//
// A host that reboots drops its connections: the next operation fails with a
// dial-step *ConnectError; call Connect again to wait for it to come back.
//
// SSH host keys are never accepted unchecked: Config.HostKey is the key the
// host must present; without it, HostKeys trusts the first key the machine
// presents and requires it from then on (the caller records it for later
// runs).
//
// Nothing here logs: passwords, keys and script contents (which may carry
// bootstrap tokens) never leave the call.
//
// The scripts here are plain Windows PowerShell 5.1; the simulated hosts of
// internal/sandbox/winsim run them with their PowerShell engine (Get-FileHash,
// Test-Path, New-Item, Move-Item, Remove-Item, if, exit, and the stdin upload's
// $input, [Convert]::FromBase64String and FileStream members).
package remote

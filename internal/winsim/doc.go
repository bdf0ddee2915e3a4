// Package winsim simulates Windows Server hosts at the protocol level, the way
// govmomi's vcsim simulates vCenter, so the provider's bootstrap can be tested
// without Windows.
//
// A Host serves WinRM (WS-Management, WinRS shell: Create, Command, Send,
// Receive, Signal, Delete) on HTTP and HTTPS with Basic and NTLMv2 (Negotiate)
// authentication that really checks the password, and SSH (password and
// public-key authentication; exec runs a command line, subsystem sftp serves
// the disk). It keeps a virtual filesystem, mirrored on disk under
// <Dir>/fs/<drive>/ (case-insensitive lookups, names kept as created), a
// registry (HKLM, <Dir>/registry.json, which also holds the services) and a
// log of every script it received (<Dir>/scripts.log: time, transport, user,
// step, exit code, text).
//
// # Command lines
//
// WinRM commands and SSH exec requests are command lines as cmd.exe sees them
// (each line, also in .cmd files, has its %NAME% references expanded first):
//
//   - powershell[.exe] [-NoProfile] [-NonInteractive] [-ExecutionPolicy X]
//     -EncodedCommand <base64 UTF-16LE> | -File <path.ps1> | -Command <text>
//     (PowerShellCmdRE). Errors of -EncodedCommand scripts reach stderr as
//     CLIXML ("#< CLIXML" then <Objs> with <S S="Error"> lines), as on Windows.
//   - echo <text> >> "<path>" and echo <text> > "<path>" (EchoRedirectRE): how
//     Terraform's and Packer's WinRM communicator (packer-community/winrmcp)
//     uploads base64 chunks to %TEMP%\winrmcp-<uuid>.tmp.
//   - echo <text>, exit [/b] <n>, hostname, type <path>, mkdir <path>, del <path>,
//     cmd /c <line>, and a path to a .cmd/.bat file (run line by line with
//     cmd's "echo on" prompt lines) or a .ps1 file (run as PowerShell).
//
// # The PowerShell effects contract
//
// The simulator cannot run PowerShell. It executes the small set of statement
// shapes below; every other statement is recorded in scripts.log and succeeds
// with no output. The bootstrap (internal/bootstrap) must write its steps with
// these shapes only, so that what it expects of a host is what the simulator
// does. Effects lists the same set in code and a test keeps the two in step.
// Arguments are quoted literals ('single' preferred: nothing expands), $variables
// set earlier in the script, $env:NAME, or (bracketed statements).
//
// Files and directories:
//
//	Set-Content -Path '<path>' -Value '<text>' [-NoNewline]   write (adds CRLF unless -NoNewline)
//	Add-Content -Path '<path>' -Value '<text>' [-NoNewline]   append
//	Get-Content -Path '<path>' [-Raw]                         output the lines (or the whole text)
//	[IO.File]::WriteAllBytes('<path>', [Convert]::FromBase64String('<base64>'))   WriteAllBytes
//	[IO.File]::WriteAllText('<path>', '<text>')                                   WriteAllText
//	New-Item -ItemType Directory -Force -Path '<path>' [| Out-Null]   also -ItemType File [-Value]; mkdir
//	Test-Path [-Path|-LiteralPath] '<path>' [-PathType Leaf|Container]   True or False
//	Remove-Item [-Path|-LiteralPath] '<path>' [-Force] [-Recurse] [-ErrorAction SilentlyContinue]
//	Move-Item [-Path|-LiteralPath] '<src>' -Destination '<dst>' [-Force]
//	Copy-Item [-Path|-LiteralPath] '<src>' -Destination '<dst>' [-Force]
//	Get-FileHash -Algorithm SHA256 [-LiteralPath] '<path>'   object with .Hash (upper-case hex of the real bytes)
//	(Get-FileHash -Algorithm SHA256 -LiteralPath '<path>').Hash, or | Select-Object -ExpandProperty Hash
//
// Services (the simulated service control manager):
//
//	New-Service -Name '<name>' -BinaryPathName '<exe and args>' [-DisplayName '<d>'] [-StartupType Automatic|Manual|Disabled]
//	Set-Service -Name '<name>' -StartupType <type>
//	Start-Service '<name>' / Stop-Service '<name>' [-Force] / Restart-Service '<name>'
//	(Get-Service -Name '<name>').Status   Running or Stopped; missing service is an error
//	Remove-Service -Name '<name>', sc.exe delete <name>
//
// Starting a service runs its program (see "The service control manager"
// below); Automatic services start again after every boot. The cmdlets call
// the SCM's h.startService / h.stopService (errors are *ServiceError with
// the Win32 code; stopService refuses a service with running dependents,
// h.stopServiceWithDependents is -Force) and the table h.svcs.
// [Environment]::SetEnvironmentVariable(n, v, 'Machine') is Host.SetMachineEnv
// (and GetEnvironmentVariable(n, 'Machine') is Host.MachineEnv): it writes the
// registry only; services see it after the next reboot.
//
// System:
//
//	Restart-Computer [-Force]   the script finishes, then the host goes down
//	                            (connections drop) and comes back after RebootDelay
//	Stop-Computer [-Force], shutdown.exe /s|/p, sysprep.exe ... /shutdown ...
//	    (directly, with &, or Start-Process -FilePath '...\sysprep.exe' -ArgumentList '...')
//	                            the command finishes, then the host goes down for
//	                            good and HostConfig.OnShutdown runs (the sandbox
//	                            powers the VM off: how sysprep ends an image build)
//	[Environment]::OSVersion.Version[.ToString()]   "10.0.<build>.0" (OSVersion)
//	(Get-ItemProperty -Path 'HKLM:\SOFTWARE\Microsoft\Windows NT\CurrentVersion').CurrentBuild
//	    also .UBR, .CurrentBuildNumber, .ProductName, .EditionID (Get-ItemProperty,
//	    Get-ItemPropertyValue -Path '<key>' -Name UBR)
//	$env:COMPUTERNAME, hostname, [Environment]::MachineName   the computer name (COMPUTERNAME)
//
// Output, errors and control flow:
//
//	Write-Output '<text>', echo '<text>', Write-Host '<text>', a bare '<text>' or $variable
//	Write-Error '<message>'   error record: stderr, $? false
//	[Console]::Error.WriteLine('<text>')   a plain stderr line
//	throw '<message>'   terminating error, exit code 1
//	exit <n>
//	$name = <literal | $env:X | (statement) | [IO.Path]::GetFullPath("...")>   variables
//	$ErrorActionPreference = 'Stop'   the first error ends the script (exit 1)
//	('<text>' + $v + (statement).Property)   concatenation: strings join, numbers add
//	if (<condition>) { ... } elseif (<condition>) { ... } else { ... }   (if)
//	    conditions: a statement or expression (truthy unless empty/False/0),
//	    -not / !, -and / -or, and -eq -ne -like -notlike -match -notmatch
//	try { ... } catch { ... } finally { ... }
//	Statement | Out-Null, | Select-Object -ExpandProperty <p>, | Out-String
//
// Exit codes follow powershell.exe: -EncodedCommand and -Command exit 1 when
// the last statement failed (even with -ErrorAction SilentlyContinue), -File
// exits 0 unless the script calls exit or throws.
//
// Uploads. Two whole-script shapes carry file contents:
//
//	StdinUpload (StdinUploadRE), used by internal/remote over WinRM:
//	    $f = [IO.File]::Create('<path>'); try { foreach ($l in $input) {
//	    $b = [Convert]::FromBase64String($l); $f.Write($b, 0, $b.Length) } } finally { $f.Close() }
//	    with the file's base64 lines sent on stdin (WinRM Send).
//	WinrmcpRestore (WinrmcpRestoreRE): winrmcp's restore script, which decodes
//	    the lines its echo-redirect chunks (echo-redirect) appended to the temp file.
//
// Over SSH files arrive by SFTP ("/C:/k/file" paths).
//
// Image builds (downloads, archives, Windows features):
//
//	Invoke-WebRequest [-UseBasicParsing] -Uri '<url>' -OutFile '<path>'   a real HTTP GET from
//	    this machine (the tests' artifact servers); errors read as on Windows
//	Expand-Archive -Path '<zip>' -DestinationPath '<dir>' [-Force]   unzip into the filesystem
//	tar.exe -xzf '<archive.tar.gz>' -C '<dir>'   untar (tar.exe ships with Windows Server 2019+)
//	(Get-WindowsFeature -Name '<name>').Installed   True once installed and rebooted
//	Install-WindowsFeature -Name '<name>'   .RestartNeeded is Yes until the next boot completes
//	    the install (features.json keeps the state across reboots and into clones)
//
// # Named steps and faults
//
// A script names its step with a comment line "# step: <name>" (StepComment).
// HostConfig.Faults (and Host.SetFaults at run time) can refuse connections,
// fail every authentication, and for a step (or a script matching a regexp)
// exit non-zero with a given stderr, delay, hang until cancelled, or reboot the
// host as the step arrives. Faults.KubeletNeverReady makes the simulated
// kubelet register its Node but never report Ready.
//
// # The service control manager, the registry, sc.exe, nssm and containerd
//
// (Behaviours modelled by the SCM work; merge into the package's table of
// modelled behaviours as a separate group.)
//
// The registry (registry.go) is HKEY_LOCAL_MACHINE with REG_SZ,
// REG_EXPAND_SZ, REG_MULTI_SZ, REG_DWORD and REG_BINARY values, saved to
// <Dir>/registry.json: it survives reboots and clones copy it with the disk
// (internal/sandbox/guests/disk.go). It holds
// HKLM\SOFTWARE\Microsoft\Windows NT\CurrentVersion (the configured build,
// rewritten at every boot), HKLM\SYSTEM\CurrentControlSet\Control\Session
// Manager\Environment (the machine environment) and
// HKLM\SYSTEM\CurrentControlSet\Services\<name> (ImagePath, Start 2/3/4,
// DelayedAutostart, DisplayName, Description, DependOnService, Environment,
// ObjectName, FailureActions as SERVICE_FAILURE_ACTIONS bytes, nssm's
// Parameters subkey). The engine's HKLM: provider reads and writes h.reg.
//
//	Behaviour                                              Upstream source
//	start: dependencies first, any start type; one          learn.microsoft.com/windows/win32/services/service-startup
//	  failing -> 1068, a missing one -> 1075
//	ImagePath: REG_EXPAND_SZ expanded; quoted module, or    CreateProcessW lpCommandLine (learn.microsoft.com)
//	  unquoted tried at each space; args by C runtime rules  "Parsing C command-line arguments" (learn.microsoft.com)
//	no file -> 2, not an executable -> 193                  CreateProcess errors (system error codes)
//	no Running report within ServiceStartTimeout (30 s)     ServicesPipeTimeout; error 1053
//	  -> 1053, process ended
//	process ends before Running -> 1067                     ERROR_PROCESS_ABORTED (event 7034)
//	Disabled -> 1058; marked for deletion -> 1072            system error codes; DeleteService docs
//	program the simulator does not model -> refused         (simulator rule: never pretend)
//	environment: machine env captured at boot + the          services.exe builds its block at boot; Environment
//	  service's Environment; no stdout/stderr                value (REG_MULTI_SZ) of the service key
//	stop: refused with running dependents (1051, PS         Stop-Service docs (-Force), ControlService docs
//	  "It can only be stopped if the Force flag is set.")
//	recovery (FailureActions): restart after the delay;     SERVICE_FAILURE_ACTIONS, sc-failure docs
//	  failure count picks the action, reset= zeroes it;
//	  reboot/run actions refused
//	boot: Automatic services, dependencies first,           "Automatically starting services" (learn.microsoft.com)
//	  delayed ones last
//	sc.exe create/config/description/failure/delete/start/  learn.microsoft.com/windows-server/administration/
//	  stop/query/queryex/qc, "[SC] <API> FAILED <code>:",     windows-commands/sc-*; 1639 on a bad command line:
//	  exit = Win32 code (1060, 1073, 1056, 1062, 1051,        OctopusDeploy/Issues#1787
//	  1072, 87); "name= value" pairs, else 1639
//	nssm 2.24 install/set/get/reset/remove/start/stop/      nssm.cc 2.24 (commit 220d2b0): service.cpp,
//	  restart/status, messages and exit codes                 settings.cpp, messages.mc
//	nssm service: Application + AppParameters               service.cpp start_service, throttle_restart,
//	  (CommandLineToArgvW), AppDirectory, AppEnvironment[Extra],  end_service; io.cpp get_output_handles,
//	  AppStdout/AppStderr appended (no directory created;    rotate_file, rotated_filename, write_to_file
//	  2.24 runs the app without output), AppRotateFiles/
//	  Bytes/Seconds/Online, AppExit Restart/Ignore/Exit,
//	  AppRestartDelay, AppThrottle back-off; missing app ->
//	  service stops (exit 3)
//	containerd --register-service / --unregister-service /  containerd cmd/containerd/command/service_windows.go
//	  --run-service / console; config version rules of 1.7   services/server/config (1.7.24), cmd/containerd/
//	  and 2.x; CRI sandbox image and CNI dirs (ContainerdConfig) server/config (2.2.7), plugins/cri/*/plugin.go
//	sshd service program                                    PowerShell/openssh-portable (install-sshd.ps1)
//	kubelet (internal/kubeletsim): Running only with        kubernetes cmd/kubelet/app/options/osflags_windows.go,
//	  --windows-service; fails under nssm with it            cmd/kubelet/app/server.go (initForOS)
//
// Faults: Faults.ServiceExits makes a service's process exit After it
// reported Running (a crash: recovery actions apply); Faults.RebootMidReply
// cuts the WinRM Receive reply of a matching command mid-body and reboots
// the host.
//
// # WinRM details
//
// Receive is a long poll bounded by the request's OperationTimeout (at most
// 60s); on expiry the w:TimedOut fault (code 2150858793, text containing
// "OperationTimeout") tells the client to poll again. Unknown shells get
// w:InvalidSelectors, requests over MaxEnvelopeSizeKB get w:EncodingLimit,
// bad credentials HTTP 401 with "WWW-Authenticate: Negotiate" and
// "Basic realm=\"WSMAN\"". NTLM authenticates the TCP connection: a connection
// that completed the handshake is served without an Authorization header, and
// an AUTHENTICATE message sent on another connection than its CHALLENGE fails,
// as on Windows. An empty POST only authenticates (200).
package winsim

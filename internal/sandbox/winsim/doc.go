// Package winsim simulates Windows Server hosts at the protocol level, the way
// govmomi's vcsim simulates vCenter, so the provider's bootstrap can be tested
// without Windows.
//
// A Host serves WinRM (WS-Management, WinRS shell: Create, Command, Send,
// Receive, Signal, Delete) on HTTP and HTTPS with Basic and NTLMv2 (Negotiate)
// authentication that really checks the password, as the host's WinRM
// service configuration allows (HostConfig.WinRM, a stock Windows Server's by
// default: see "WinRM details"), and SSH (password and
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
//     (PowerShellCmdRE), run as described under PowerShell below.
//   - echo <text> >> "<path>" and echo <text> > "<path>" (EchoRedirectRE): how
//     Terraform's and Packer's WinRM communicator (packer-community/winrmcp)
//     uploads base64 chunks to %TEMP%\winrmcp-<uuid>.tmp.
//   - echo <text>, echo <text> 1>&2 (to stderr), exit [/b] <n>, hostname,
//     type <path>, mkdir/md <path> (an existing path: "A subdirectory or
//     file <path> already exists.", errorlevel 1), del <path>, cmd /c <line>;
//     commands joined by & (always), && (after success) and || (after
//     failure), ^ escaping the next character, outside double quotes
//     (cmd_operators.go; learn.microsoft.com/windows-server/administration/
//     windows-commands/cmd). Refused as not modelled: pipes, parenthesised
//     blocks, input redirection and any redirection other than echo's to a
//     file or 1>&2; cmd's other internal commands (assoc, break, call,
//     cd/chdir, cls, color, copy, date, dir, dpath, endlocal, for, ftype,
//     goto, if, keys, mklink, move, path, pause, popd, prompt, pushd,
//     rd/rmdir, rem, ren/rename, set, setlocal, shift, start, time, title,
//     ver, verify, vol: each has its page under learn.microsoft.com/
//     windows-server/administration/windows-commands/) are refused by name
//     ("winsim: cmd.exe: the simulated host does not model the internal
//     command 'ver'", exit code 1: cmd_builtins.go); and a path to a .cmd/.bat
//     file (run line by line with cmd's "echo on" prompt lines) or a .ps1
//     file (run as PowerShell).
//   - a program (a path, or a name on PATH): run as native programs are below.
//     Anything else is what cmd.exe says of an unknown name ("'x' is not
//     recognized as an internal or external command, operable program or
//     batch file.", exit code 9009).
//
// # PowerShell
//
// powershell.exe runs scripts with the engine in internal/sandbox/winsim/pwsh, which
// walks the syntax tree of the tree-sitter PowerShell grammar
// (github.com/airbus-cert/tree-sitter-powershell v0.25.10, its C sources
// vendored in internal/sandbox/winsim/pwsh/grammar, through
// github.com/tree-sitter/go-tree-sitter v0.25.0, cgo). Nothing is matched as
// text: a command inside a comment or a string is not a statement.
//
// The gate. Every script is parsed before it runs; a syntax error fails the
// whole script as a ParserError (exit code 1) and none of it runs.
//
// Grammar gaps found (scripts must be written in the form both accept; the
// gate is not weakened for them):
//
//   - an unquoted native argument with '=' and a path
//     (kubelet.exe --config=C:\k\c.yaml) is a syntax error: quote it;
//   - a range that starts a pipeline (1..5 | ..., $r = 1..5) parses as a
//     command named "1..5": the engine refuses it rather than fail as an
//     unknown command; write @(1, 2, 3, 4, 5);
//   - the grammar knows only the ASCII quotes, PowerShell also the
//     typographic ones, U+2018 to U+201B as single quotes and U+201C to
//     U+201E as double quotes (CharTraits.cs IsSingleQuote/IsDoubleQuote,
//     github.com/PowerShell/PowerShell): pwsh/quotes.go reads every token of
//     a script that has one as Windows does, evaluates a doubled one inside a
//     single-quoted string as one quote, and refuses the script where
//     Windows would end or start a string the grammar does not see;
//   - a parenthesis right after a bare argument (New-Object T('a', 'b'))
//     is a method's argument_list to the grammar; PowerShell reads a
//     separate parenthesised argument, and so does the engine (pwsh/expr.go);
//   - a redirection with no space before its target (2>$null, >out.txt)
//     is one generic token among a command's arguments: the engine reads it
//     as the redirection (pwsh/redirtoken.go).
//
// The parser's semantic checks run too: two constant keys of a hash literal
// equal ignoring case are the ParserError DuplicateKeyInHashLiteral
// (SemanticChecks.cs); keys computed at run time fail the statement.
//
// The refusal rule. Unknown means failure. A command the host does not model
// fails as an unknown command fails on Windows (CommandNotFoundException);
// an unknown parameter, an ambiguous prefix, a missing argument, a
// parameter named twice, parameters of different parameter sets (-Path
// with -LiteralPath), a missing mandatory parameter of the resolved set
// (powershell.exe -NonInteractive cannot prompt), an array given to a
// single-valued parameter, a value (or an array element) outside an enum
// or ValidateSet fail with the ParameterBindingException texts of Windows
// PowerShell 5.1 (pwsh/paramsets.go binds as CmdletParameterBinderController
// does; an array given to a String[] parameter binds each element); a misspelt .NET method is MethodNotFound,
// an unknown type TypeNotFound, an impossible cast InvalidCastFromStringToInteger,
// a .NET exception "Exception calling ...", a numeric cast out of range
// "Value was either too large or too small for an Int32." (LanguagePrimitives.cs;
// a double rounds half to even). A real command, parameter, member
// or construct that exists on Windows but is not modelled here is refused
// with the simulator's own error (FullyQualifiedErrorId SimulatorNotModelled,
// NotSupportedException), never "recorded, succeeds". A native program the
// host has no implementation of writes "winsim: the simulated host has no
// implementation of <program>" on stderr and exits 1. A .NET type's static
// property or method, or an object's property or method, that the engine
// does not model is refused (pwsh/members_real.go), where PowerShell would
// answer $null for a name the object does not have.
//
// No silent yes. Every parameter a modelled cmdlet declares is read by its
// implementation, refused (Unmodelled: the binder refuses the call), or
// NoEffect with the reason it changes nothing Windows would show here (the
// command table lists them as "accepted, no effect here");
// TestEveryParameterUsedOrRefused reads each cmdlet's Run and what it
// reaches and fails for any other. The walk test (walk_test.go) parses every
// script the provider can send, as its golden files hold them (every
// template and option set of internal/bootstrap, the agents' start scripts
// of internal/kube, the transports' own scripts of internal/remote;
// TestProviderTemplatesAllRendered fails for a template no golden script
// was rendered from), checks each cmdlet, parameter, type, member and
// program is modelled, and binds each command as the binder would before
// the script runs (pwsh/staticbind.go: literal arguments converted and
// validated, run-time ones bound unconverted). The common parameters
// -Verbose, -Debug and -Confirm turn on a stream or a prompt the engine
// does not have and are refused (their :$false forms bind).
//
// The language modelled: strings ('...' literal, "..." and here-strings
// expanding $var, $env:X, $(...) and backtick escapes), numbers, $true/$false/
// $null, arrays (@(), a, b), hashtables (@{}, [ordered]@{}), [pscustomobject]@{},
// script blocks; + - * / %, -eq -ne -lt -gt -le -ge -like -notlike -match
// -notmatch ($Matches) -contains -notcontains -in -notin -is -isnot -replace
// -split -join -f -and -or -xor -not ! (case-insensitive; -c and -i variants);
// casts to [string] [int] [long] [double] [bool] [array] [object[]] [string[]]
// [byte[]] [hashtable] [scriptblock] [void]; member access (member
// enumeration on arrays), indexing, method calls; assignment (= += -= *= /=
// %=, $null = ..., $env:X = ...); if/elseif/else, foreach, for, while, break,
// continue, return, exit, throw, try/catch (type filters)/finally with $_;
// pipelines with Where-Object/ForEach-Object script blocks ($_/$PSItem);
// & 'path' args and bare native invocation; | Out-Null, > $null, 2>$null,
// 2>&1, > file (UTF-16LE, as Out-File in 5.1; 2>$null and 2>&1 take a
// cmdlet's non-terminating errors off the console, still into $Error and $?
// false, not its terminating ones; other redirections are refused before the
// command runs: pwsh/redirstreams.go); $input (stdin, read lazily
// line by line), $?, $LASTEXITCODE, $Error, $Matches; $PSVersionTable
// (PSVersion 5.1.<build>.<UBR>), $PSHOME, $Host (ConsoleHost: powershell.exe
// under WinRS and sshd), $PROFILE, $HOME and the preference variables'
// defaults (pwsh/automatic.go); the automatic variables not modelled ($PID,
// $PWD, $MyInvocation, ...) are refused, an unset variable is $null.
//
// The error model is Windows PowerShell 5.1's: non-terminating errors (a
// cmdlet's WriteError) print and set $? false; statement-terminating errors
// (unknown command, parameter binding, .NET exceptions) end their statement
// and the script goes on; throw and any error under $ErrorActionPreference =
// 'Stop' (or -ErrorAction Stop) end the script unless caught. try catches
// terminating errors only. Native programs set $LASTEXITCODE and $? and never
// stop a script, not even under Stop; their stderr goes straight through
// unless redirected (2>&1, 2>$null), when each line becomes a
// NativeCommandError record, which under Stop terminates, as in 5.1. Error
// records print as powershell.exe prints them ("<Command> : <message>",
// "At line:L char:C" or "At <file>:L char:C", the source line and ~ marks,
// CategoryInfo, FullyQualifiedErrorId); under -EncodedCommand they reach
// stderr as CLIXML ("#< CLIXML" then <Objs> with <S S="Error"> lines).
// Exit codes: -EncodedCommand and -Command exit 1 when the last statement
// failed ($? false, also under -ErrorAction SilentlyContinue) or the script
// ended on an error, -File exits 0 unless the script calls exit or ends on an
// error (1).
//
// Providers: the FileSystem on drive C: (the virtual filesystem; any other
// drive is "Cannot find drive. A drive with the name 'Q' does not exist.") and
// the Registry's HKLM: for the keys the host models: CurrentVersionKey and
// HKLM:\SYSTEM\CurrentControlSet\Services\<name> from the service table. A
// missing path or key is "Cannot find path '...' because it does not exist."
// Set-Content, New-Item -ItemType File and Invoke-WebRequest -OutFile need
// the parent directory, as on Windows.
//
// Native programs are found as PowerShell and cmd.exe find them (a path, else
// PATH with PATHEXT; C:\Windows\System32 holds the programs Windows ships) and
// run as a Process (process.go) by identity: System32 programs by name,
// anything else by its content (ExecutableIdentity); a file that is not an
// executable fails with "The specified executable is not a valid application
// for this OS platform." Programs here: cmd.exe (/c <line>, run as cmd.exe
// lines below), tar.exe (-x[z]f <archive> -C <dir>), icacls.exe on the ACL
// model below (<file> alone displays the DACL as icacls prints it; /grant[:r]
// <sid>:[(OI)(CI)(IO)(NP)]<perm> ..., /remove[:g] <sid> ...,
// /inheritance:e|d|r, /reset, /q, /c; <sid> a name or *S-1-...; an unknown
// name is "No mapping between account names and security IDs was done.",
// exit 1332; a malformed grant "Invalid parameter", exit 87; without
// WRITE_DAC "Access is denied.", exit 5; /T, /deny, /save, /restore,
// /setowner and the rest refused; programs_icacls.go), hostname.exe,
// shutdown.exe (/s, /p: power off; /r: restart), sysprep.exe (/generalize
// /oobe /quiet /mode:vm /unattend:<existing file> with /shutdown or /reboot;
// an answer file Setup could not use is refused naming why: not an unattend
// root in urn:schemas-microsoft-com:unattend, settings for a pass that is
// none of the seven configuration passes, an AdministratorPassword outside
// auditSystem and oobeSystem (Microsoft Learn, "Windows Setup Configuration
// Passes" and AdministratorPassword's valid passes);
// Setup caches the answer file as C:\Windows\Panther\unattend.xml:
// setup_answerfile.go, where PlaceAnswerFile and PlaceFile let the platform
// write on a disk while no host runs on it, as vCenter's customization and
// VMware Tools' deployPkg do between a clone's boots: the boots themselves,
// generalize, specialize and OOBE are internal/sandbox/vmtools'
// customization.go; a customization's domain join, NetSetup.LOG at
// C:\Windows\debug\NetSetup.LOG and Setup's *SENSITIVE*DATA*DELETED* in its
// cached copy are vmtools' domainjoin.go, against internal/sandbox/addomain's
// domain controller, with their sources there),
// ctr (-n <namespace> images pull [--hosts-dir <dir>] [--user <user:password>]
// <ref>: recorded in <Dir>/images.json, Host.Images; with --hosts-dir the
// pull goes through that directory's hosts.toml as containerd's resolver
// makes it, registry_pull.go's PullThroughHosts: containerd docs/hosts.md,
// core/remotes/docker/config/hosts.go and resolver.go; --user is sent to
// any host that asks, cmd/ctr/commands/resolver.go; only loopback hosts are
// reached, the others fail their lookup), hnsdiag.exe (list all|networks|endpoints|loadbalancers, from
// the host's HNS state in the form microsoft/SDN's
// Kubernetes/windows/kubeadm/Kubecluster.md shows; its other verbs and the
// -d detail flags refused; hns.go, where the HostNetworkingService module's
// Get-HnsNetwork, Get-HnsEndpoint and Get-HnsPolicyList read the same
// state; ovs.go keeps a host's Open vSwitch as Antrea runs it on Windows,
// antrea-io/antrea docs/design/windows-design.md: whether the Open vSwitch
// Extension is installed, the HNS network it is enabled on, the bridges and
// their ports, AntreaProxy's Service groups and the node routes, written
// by kubeletsim's antrea-agent and OVS programs), reg.exe (add <HKLM\key> /v <name> /t REG_SZ|REG_DWORD|REG_MULTI_SZ /d
// <data> /f only, REG_MULTI_SZ's strings separated by \0,
// https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/reg-add;
// "ERROR: Access is denied." to a filtered token; programs_reg.go), netsh.exe
// (winhttp set proxy and winhttp show proxy only: the machine's WinHTTP proxy,
// which Windows Update's agent uses, kept in the registry so clones have it,
// the quotes of proxy-server="..." and bypass-list="..." not part of it;
// https://learn.microsoft.com/en-us/windows/win32/winhttp/netsh-exe-commands#set-proxy,
// https://learn.microsoft.com/en-us/troubleshoot/windows-client/installing-updates-features-roles/windows-update-client-determines-proxy-server-connect;
// programs_netsh.go),
// bcdedit.exe (/set [{current}] testsigning on|off only, effective at the
// next boot, which writes SystemStartOptions; learn.microsoft.com
// windows-hardware/drivers/install/the-testsigning-boot-configuration-option;
// programs_bcdedit.go), netcfg.exe (-q, -u, -l <inf> -c s -i OVSExt: the OVS
// kernel driver as antrea-io/antrea hack/windows/Install-OVS.ps1 installs
// it, refused from a HostProcess container's mount, without its package's
// files, test-signed without TESTSIGNING, or unsigned; learn.microsoft.com
// windows-server/administration/windows-commands/netcfg; programs_netcfg.go),
// and the
// servicing programs below (dism.exe, wusa.exe). sc.exe
// and nssm belong to the service control manager's files. Each refuses any
// form it does not document.
//
// A site behind a proxy (egress.go, Faults.Egress): the hosts outside (the
// download server, the registries) answer a guest only through the site's
// proxy. Invoke-WebRequest goes through -Proxy when given and never through
// HTTP_PROXY (Windows PowerShell 5.1 takes a proxy from -Proxy or Internet
// Options: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.utility/invoke-webrequest?view=powershell-5.1),
// and a direct connection out fails with "Unable to connect to the remote
// server". A service's process keeps the environment it started with, its
// Environment value included (RunningServiceEnv); kubeletsim's pulls take
// containerd's proxy from there only, as containerd on Windows does
// (kubernetes-sigs/sig-windows-tools#339, containerd/containerd#8846), and
// open a CONNECT tunnel through the sandbox's site proxy
// (internal/sandbox/siteproxy, github.com/elazarl/goproxy).
//
// Programs and their subsystem (process.go, background.go, pwsh/native.go,
// cmdline.go). Every program is registered with the subsystem its real PE
// header names (IMAGE_SUBSYSTEM_WINDOWS_CUI or _GUI,
// https://learn.microsoft.com/en-us/windows/win32/debug/pe-format#windows-subsystem).
// GUI: wusa.exe (the Windows Update Standalone Installer shows dialogs
// unless /quiet, and scripts wait for it with Start-Process -Wait; the
// wusa page above) and sysprep.exe (the System Preparation Tool window;
// Packer's Windows builders poll ImageState after `& sysprep.exe` because
// it returns at once). Console: cmd.exe, powershell.exe, dism.exe, reg.exe, netsh.exe,
// sc.exe, tar.exe, icacls.exe, hostname.exe, shutdown.exe, hnsdiag.exe,
// bcdedit.exe, netcfg.exe
// (their Windows Commands pages describe console output), nssm, containerd,
// ctr, host-local, kube-log-runner, sshd and the host's own programs
// (HostConfig.Programs: Go programs, which `go build` links as console
// programs unless -H=windowsgui). PowerShell waits for a console program;
// a GUI program last in its pipeline (`& wusa.exe ...`, `$x = & wusa.exe`)
// it starts and does not wait for: the statement writes nothing and leaves
// $LASTEXITCODE and $? as they were (NativeCommandProcessor.cs of
// PowerShell/PowerShell, _isRunningInBackground; PowerShell/PowerShell#26455
// for Windows PowerShell). Piped to another command (`| Out-Null`) it is
// waited for and sets $LASTEXITCODE; a redirection (>) does not make it
// wait (#26455) and is refused as not modelled. Start-Process -Wait waits
// for any program, -PassThru then writes a System.Diagnostics.Process with
// its ExitCode; Start-Process without -Wait starts the program and returns
// (-PassThru alone refused: its ExitCode is not known yet). A program not
// waited for runs in the background once the script that started it has
// ended (background.go: wusa and sysprep take minutes, a script's next
// statements milliseconds, so the script never sees its effects), with its
// caller's logon, until it ends or the host goes down. cmd.exe waits for a
// GUI program in a batch file ("This new behavior does NOT occur if
// executing within a command script", start /?); outside one (cmd /c
// <line>) it is refused as not modelled; start /wait <program> [args]
// waits for any program and its exit code is the line's
// (https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/start),
// start without /wait and its other options are refused.
//
// Get-HotFix reads the servicing store back (pscmdlets_hotfix.go): one
// Win32_QuickFixEngineering object per installed KB; -Id's KB not
// installed is a non-terminating ObjectNotFound error; while a package is
// Install Pending it is refused as not modelled (whether QFE lists it before
// the restart is not documented). The fault Faults.UpdatesNeverInstalled
// makes DISM and wusa accept a KB's package and exit 0 with nothing
// installed, for the read-back that must catch it.
//
// Time (HostConfig.Latency, internal/sandbox/latency, whose durations.go
// files keep each figure with its source). With the model off (nil, the
// default) everything happens at once. On, the host takes Windows' time
// divided by the model's factor: a service started by Start-Service, sc.exe
// or nssm stays START_PENDING for ServiceStart (at most seconds; the Service
// Control Manager's 30 s start timeout bounds every healthy start), except
// the automatic services of a boot, whose time is the boot's; Invoke-WebRequest
// takes its bytes' time at the site's link speed (DownloadLink), and fails
// "The operation has timed out." when -TimeoutSec ends first; DISM, wusa and
// the Windows Update Agent take UpdateInstall for a cumulative update (an
// SSU none: its time is not modelled), and the restart that completes a
// staged update is UpdateRestart ("Working on updates"), any other restart
// RebootDelay (the sandbox sets it to the model's WindowsRestart). The boot
// to VMware Tools and a customization's phases are vmtools' (internal/sandbox/vmtools);
// the kubelet's registration, status syncs and image pulls kubeletsim's.
//
// Servicing (servicing.go, programs_dism.go). Update packages are
// internal/sandbox/updatepkg's signed text files (.cab and .msu alike: KB,
// SSU or LCU, the build they apply to, the UBR after the restart, the SSU
// they need, whether they need a restart). dism.exe /Online /Add-Package
// /PackagePath:<file> [/Quiet] /NoRestart and wusa.exe <file.msu> /quiet
// [/norestart] install them into the host's CBS store (<Dir>/servicing.json,
// on the disk, so clones have their template's updates): exit code 0;
// 3010 when a restart is needed; wusa without /norestart restarts the host
// itself and exits 1641; an installed (or pending) update is 0 for DISM and
// 2359302 (0x240006 WU_S_ALREADY_INSTALLED) for wusa; a package for another
// build or older than the installed LCU is 0x800F081E CBS_E_NOT_APPLICABLE
// (DISM) or 0x80240017 WU_E_NOT_APPLICABLE (wusa); an LCU whose SSU is not
// installed is 0x800F0823 CBS_E_NEW_SERVICING_STACK_REQUIRED (DISM) or
// 0x80240017 (wusa); content that is not what was signed is 0x80096010
// TRUST_E_BAD_DIGEST; exit codes that are HRESULTs reach $LASTEXITCODE as
// the Int32 they are (0x800F081E is -2146498530). DISM prints its banner,
// progress and result unless /Quiet, and its errors always ("Error:
// 0x800f081e", the message, the dism.log path); each install writes
// C:\Windows\Logs\CBS\CBS.log lines. A staged update that needs a restart
// writes the Component Based Servicing\RebootPending key (and, from wusa,
// WindowsUpdate\Auto Update\RebootRequired); the next boot completes it
// before anything serves, removes the keys and writes the new UBR under
// CurrentVersion. wusa run from a network logon (WinRM, SSH) installs
// nothing and exits with 5 ERROR_ACCESS_DENIED (KB2773898); from a
// scheduled task as SYSTEM or a guest operation it installs. DISM adds a
// .msu to the running system only from build 22000 (Windows 11 21H2) on,
// as the DISM page documents (Server 2025); on earlier builds (Server 2019,
// 2022: offline images only) it is refused as not modelled. Refused as not
// modelled: DISM's /Image and every other DISM command or option, DISM
// without /NoRestart, wusa's interactive forms, /uninstall, /kb:, /extract,
// /log and the restart options; and a Server 2025 target LCU installed by
// DISM or wusa on a host below its checkpoint cumulative update's revision
// without that checkpoint installed or staged (Microsoft documents the
// order, https://learn.microsoft.com/en-us/windows/deployment/update/catalog-checkpoint-cumulative-updates,
// not Windows' answer to another; the Windows Update Agent merges the
// checkpoints itself, as the page states for WU and WSUS).
//
// The Windows Update Agent (wua.go, wua_criteria.go): New-Object -ComObject
// Microsoft.Update.Session, Microsoft.Update.UpdateColl and
// Microsoft.Update.SystemInfo with the members a search, download and
// install uses; IUpdateSearcher::Search takes conjunctions of IsInstalled=0,
// IsHidden=0, Type='Software' and CategoryIDs contains '<guid>' joined by
// "or" (other real criteria are refused as not modelled, anything else is
// 0x80240032 WU_E_INVALID_CRITERIA); the service is the WSUS the policy
// names (WUServer with UseWUServer = 1, over real HTTP to the sandbox's
// update service: updatepkg.CatalogPath), else Windows Update, whose name
// does not resolve from the sandbox (0x8024402C
// WU_E_PT_WINHTTP_NAME_NOT_RESOLVED); a refused connection is 0x80072EFD,
// HTTP 404/500/502/503 are 0x80244019/0x8024401F/0x80244021/0x80244022. The
// agent goes through the machine's WinHTTP proxy (netsh winhttp set proxy:
// its proxy list per scheme or for all, its bypass list's "*" wildcards and
// <local>; WPAD is not modelled), for the scan as Windows does and, in the
// sandbox, for the download too (Windows downloads with BITS or Delivery
// Optimization, whose own proxy discovery is not modelled): at a site that
// lets only its proxy out (Faults.Egress) a scan without it, through another
// proxy or bypassing it fails with 0x80072EFD, as WindowsUpdate.log shows a
// WSUS client with "Proxy List used: <(null)>" failing; sources:
// https://learn.microsoft.com/en-us/troubleshoot/windows-server/installing-updates-features-roles/windows-update-client-determines-proxy-server-connect,
// https://learn.microsoft.com/en-us/windows/win32/api/winhttp/ns-winhttp-winhttp_proxy_info,
// https://blog.csdn.net/weixin_34067980/article/details/92535160 (Microsoft's
// WSUS support note on 0x80072efd); results carry
// OperationResultCode 2 (succeeded), 3 (with errors), 4 (failed) and each
// update's HResult and RebootRequired; installing goes through the
// servicing stack above. CreateUpdateDownloader, CreateUpdateInstaller,
// AcceptEula and ISystemInformation are refused to a network logon (WinRM,
// SSH) with E_ACCESSDENIED ("Access is denied. (Exception from HRESULT:
// 0x80070005 (E_ACCESSDENIED))"). The Task Scheduler (tasks.go):
// New-Object -ComObject Schedule.Service to register, run, read and delete
// a task that runs one program as SYSTEM. Every other ProgID and member is
// refused as not modelled. Sources: DISM
// https://learn.microsoft.com/en-us/windows-hardware/manufacture/desktop/dism-operating-system-package-servicing-command-line-options,
// wusa https://learn.microsoft.com/en-us/troubleshoot/windows-client/installing-updates-features-roles/standalone-windows-update-installer,
// wusa's codes KB949545 (https://mskb.pkisolutions.com/kb/949545), wusa
// over WinRM KB2773898 ("Windows Update Standalone Installer (wusa.exe)
// returns 0x5 ERROR_ACCESS_DENIED when deploying .msu files through WinRM
// and Windows Remote Shell"), the WUA
// codes https://learn.microsoft.com/en-us/windows/win32/wua_sdk/wua-success-and-error-codes-,
// the CBS codes https://learn.microsoft.com/en-us/windows/deployment/update/windows-update-error-reference,
// SSU before LCU https://learn.microsoft.com/en-us/windows/deployment/update/servicing-stack-updates.
//
// Uploads. internal/remote streams base64 lines on stdin to a script that
// reads $input with foreach, decodes each line with [Convert]::FromBase64String
// and writes it through [IO.File]::Create's FileStream (Write, Close); Terraform's
// WinRM communicator (packer-community/winrmcp) appends base64 chunks with
// cmd.exe's echo-redirect, then its restore script reads them with
// [IO.File]::OpenText/ReadLine in a for(;;) loop and writes with
// [IO.File]::OpenWrite. Both run on the engine like any script. Over SSH files
// arrive by SFTP ("/C:/k/file" paths).
//
// Starting a service runs its program (see "The service control manager"
// below); Automatic services start again after every boot. The cmdlets call
// the SCM's h.startService / h.stopService (errors are *ServiceError with
// the Win32 code; stopService refuses a service with running dependents,
// h.stopServiceWithDependents is -Force) and the table h.svcs.
// [Environment]::SetEnvironmentVariable(n, v, 'Machine') is Host.SetMachineEnv
// (and GetEnvironmentVariable(n, 'Machine') is Host.MachineEnv): it writes the
// registry only; services see it after the next reboot. The 'User' target
// (HKCU\Environment) is not modelled and refused both ways, never answered
// with the machine's value. $env:X = ... changes the process's own block
// (Environment.SetEnvironmentVariable on the process), and every program
// the session starts gets a copy of it (CreateProcess with no environment
// of its own: "the new process uses the environment of the calling
// process", learn.microsoft.com/windows/win32/api/processthreadsapi/
// nf-processthreadsapi-createprocessw): cmd.exe expands %X% from it, batch
// files and a child powershell.exe see it. Start-Process
// (StartProcessCommand, PowerShell/PowerShell src/Microsoft.PowerShell.
// Commands.Management/commands/management/Process.cs) gives the program
// -ArgumentList joined by spaces as one command line (5.1 does not quote an
// element holding a space; the program splits it as CommandLineToArgvW)
// and waits only with -Wait: without it the cmdlet returns once the
// process started, which runs on with a copy of the environment until it
// exits or the host goes down (the job object that ends a WinRM or OpenSSH
// session's processes when the shell closes is not modelled). Get-Content
// -Raw of an empty file writes nothing ($null), as
// FileSystemContentReaderWriter.ReadDelimited adds no empty block
// (src/System.Management.Automation/namespaces/FileSystemContentStream.cs).
// A firewall rule's port filter (Get-NetFirewallPortFilter) holds its
// protocol (Any, TCP, UDP) and local ports; a port with protocol Any is
// refused, as Windows rejects it ("If a port number is identified ... this
// parameter must be set to TCP or UDP", New-NetFirewallRule -Protocol); a
// UDP rule admits none of the host's TCP listeners. Test-NetConnection's
// TCP test is a real connect from this machine (-InformationLevel Quiet a
// Boolean; 5.1 has no -Quiet).
// Restart-Computer: the script
// finishes, then the host goes down 3 s later (connections drop: Windows
// stops its services, VMware Tools' among them, before it goes; estimate,
// WaitToKillServiceTimeout allows each service 5 s) and comes back after
// RebootDelay. Stop-Computer, shutdown.exe /s|/p and sysprep.exe /shutdown:
// the command finishes, then the host goes down for good and
// HostConfig.OnShutdown runs (the sandbox powers the VM off: how sysprep ends
// an image build). Install-WindowsFeature: RestartNeeded is Yes until the next
// boot completes the install (features.json keeps the state across reboots
// and into clones).
//
// # Command table
//
// Every modelled cmdlet with the parameters it binds (position in [ ],
// enum or ValidateSet values in { }), the real parameters it refuses, what the
// host does, and Microsoft's reference; then the .NET types. TestCommandTable
// fails when this table and the registry differ.
//
// BEGIN COMMAND TABLE (generated from the cmdlet registry: go test ./internal/sandbox/winsim -run TestCommandTable -update-doc)
//
//	Add-Content
//	    parameter sets: Path (default), LiteralPath
//	    parameters: [-Path <String[]>] (set Path) (mandatory), -LiteralPath <String[]> (set LiteralPath) (mandatory), [-Value <Object[]>] (mandatory), -NoNewline <SwitchParameter>, -Encoding <FileSystemCmdletProviderEncoding> {Unknown|String|Unicode|Byte|BigEndianUnicode|UTF8|UTF7|UTF32|Ascii|Default|Oem|BigEndianUTF32}, -Force <SwitchParameter>
//	    refused (real, not modelled): -Filter, -Include, -Exclude, -Credential, -PassThru, -Stream
//	    accepted, no effect here: -Force (the file system models no read-only or hidden attributes, the only thing -Force overrides here)
//	    does: writes the values, each followed by CRLF (none with -NoNewline), in -Encoding: Default (the ANSI code page 1252, also without -Encoding), Ascii, Oem (437), UTF8 (with a BOM), String/Unicode (UTF-16LE), BigEndianUnicode, UTF32 (each with a BOM at the file's start); Byte, UTF7, BigEndianUTF32, Unknown refused
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.management/add-content?view=powershell-5.1
//	Add-WindowsCapability
//	    parameters: -Name <String>, -Online <SwitchParameter>, -LimitAccess <SwitchParameter>, -NoRestart <SwitchParameter>
//	    refused (real, not modelled): -Path, -Source, -WindowsDirectory, -SystemDrive, -LogPath, -ScratchDirectory, -LogLevel
//	    accepted, no effect here: -LimitAccess (the simulated host contacts no Windows Update source, which -LimitAccess forbids); -NoRestart (the modelled capabilities never need a restart (RestartNeeded False))
//	    does: records a known capability (OpenSSH.Server/Client) as installed; it does not create the sshd service
//	    source: https://learn.microsoft.com/en-us/powershell/module/dism/add-windowscapability
//	ConvertFrom-Json
//	    parameters: [-InputObject <String>] (mandatory)
//	    does: JSON to PSCustomObject/object[]/Int32/Int64/String/Boolean; a top-level array is one object (5.1); fractional numbers (Decimal in 5.1) refused
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.utility/convertfrom-json?view=powershell-5.1
//	Copy-Item (aliases cp, copy, cpi)
//	    parameter sets: Path (default), LiteralPath
//	    parameters: [-Path <String[]>] (set Path) (mandatory), -LiteralPath <String[]> (set LiteralPath) (mandatory), [-Destination <String>], -Force <SwitchParameter>, -Recurse <SwitchParameter>
//	    refused (real, not modelled): -Filter, -Include, -Exclude, -Credential, -PassThru, -Container, -FromSession, -ToSession
//	    does: moves/copies a file (into a directory destination, or to a path whose directory exists, else DirectoryNotFoundException); an existing destination file needs -Force to be replaced (Move-Item)
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.management/copy-item?view=powershell-5.1
//	Expand-Archive
//	    parameter sets: Path (default), LiteralPath
//	    parameters: [-Path <String>] (set Path) (mandatory), -LiteralPath <String> (set LiteralPath) (mandatory), [-DestinationPath <String>], -Force <SwitchParameter>
//	    does: unzips a .zip into the destination directory
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.archive/expand-archive?view=powershell-5.1
//	ForEach-Object (aliases %, foreach)
//	    parameters: [-Process <ScriptBlock>], -InputObject <PSObject>
//	    refused (real, not modelled): -Begin, -End, -RemainingScripts, -MemberName, -ArgumentList
//	    does: runs the script block for each input object ($_ the object) and writes its output
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/foreach-object?view=powershell-5.1
//	Get-Acl
//	    parameter sets: ByPath (default), ByLiteralPath, ByInputObject
//	    parameters: [-Path <String[]>] (set ByPath), -LiteralPath <String[]> (set ByLiteralPath) (mandatory)
//	    refused (real, not modelled): -InputObject, -Filter, -Include, -Exclude, -Audit, -AllCentralAccessPolicies, -UseTransaction
//	    does: the security object of a file or directory (READ_CONTROL needed): Path, Owner, Access (FileSystemAccessRule objects: IdentityReference, FileSystemRights, AccessControlType, IsInherited, InheritanceFlags, PropagationFlags), AreAccessRulesProtected, and the methods SetAccessRuleProtection, AddAccessRule, SetAccessRule, RemoveAccessRuleAll (pscmdlets_acl.go); Group, Sddl and the rest refused
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.security/get-acl?view=powershell-5.1
//	Get-Content (aliases cat, gc, type)
//	    parameter sets: Path (default), LiteralPath
//	    parameters: [-Path <String[]>] (set Path) (mandatory), -LiteralPath <String[]> (set LiteralPath) (mandatory), -Raw <SwitchParameter>, -Force <SwitchParameter>
//	    refused (real, not modelled): -Filter, -Include, -Exclude, -Credential, -Encoding, -TotalCount, -Tail, -ReadCount, -Delimiter, -Wait, -Stream
//	    accepted, no effect here: -Force (the file system models no read-only or hidden attributes, the only thing -Force overrides here)
//	    does: the file's lines (CRLF, LF or CR), or with -Raw the whole text; a UTF-8, UTF-16 or UTF-32 byte order mark picks the encoding (and is dropped), else the ANSI code page 1252
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.management/get-content?view=powershell-5.1
//	Get-FileHash
//	    parameter sets: Path (default), LiteralPath, Stream
//	    parameters: [-Path <String[]>] (set Path) (mandatory), -LiteralPath <String[]> (set LiteralPath) (mandatory), -Algorithm <String> {SHA1|SHA256|SHA384|SHA512|MACTripleDES|MD5|RIPEMD160}
//	    refused (real, not modelled): -InputStream
//	    does: an object with Algorithm, Hash (upper-case hex of the real bytes) and Path; SHA1, SHA256, SHA384, SHA512, MD5
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.utility/get-filehash?view=powershell-5.1
//	Get-HnsEndpoint
//	    does: the host's HNS endpoints (ID, Name, VirtualNetwork, VirtualNetworkName, IPAddress, MacAddress, IsRemoteEndpoint, the PA policy of a remote one); no parameters
//	    source: https://learn.microsoft.com/en-us/powershell/module/hostnetworkingservice/get-hnsendpoint
//	Get-HnsNetwork
//	    does: the host's HNS networks as HNS's JSON has them (ID, Name, Type, Subnets with AddressPrefix and the VSID policy, ManagementIP, and the network's RemoteSubnetRoute policies Calico's Felix adds); no parameters (winsim/hns.go)
//	    source: https://learn.microsoft.com/en-us/powershell/module/hostnetworkingservice/get-hnsnetwork
//	Get-HnsPolicyList
//	    does: the host's load balancer policy lists (ID, Policies: one ELB with SourceVIP, VIPs, ExternalPort, InternalPort, Protocol, ILB, DSR, LocalRoutedVIP; References: /endpoints/<id>, as microsoft/SDN hns.psm1 New-HnsLoadBalancer builds them); no parameters
//	    source: https://learn.microsoft.com/en-us/powershell/module/hostnetworkingservice/get-hnspolicylist
//	Get-HotFix
//	    parameters: [-Id <String[]>]
//	    refused (real, not modelled): -Description, -ComputerName, -Credential
//	    does: lists the updates of the servicing store (DISM, wusa, the Windows Update Agent installed them) as Win32_QuickFixEngineering objects (HotFixID, Description, Source); -Id: those KBs, a KB not installed a non-terminating ObjectNotFound error; refused while a package waits for a restart
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.management/get-hotfix?view=powershell-5.1
//	Get-ItemProperty (aliases gp)
//	    parameter sets: Path (default), LiteralPath
//	    parameters: [-Path <String[]>] (set Path) (mandatory), -LiteralPath <String[]> (set LiteralPath) (mandatory), [-Name <String[]>]
//	    refused (real, not modelled): -Filter, -Include, -Exclude, -Credential
//	    does: the values of a modelled registry key (HKLM:\SOFTWARE\Microsoft\Windows NT\CurrentVersion, HKLM:\SYSTEM\CurrentControlSet\Services\<name>, HKLM:\SYSTEM\CurrentControlSet\Control's SystemStartOptions); a missing key is PathNotFound
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.management/get-itemproperty?view=powershell-5.1
//	Get-ItemPropertyValue (aliases gpv)
//	    parameter sets: Path (default), LiteralPath
//	    parameters: [-Path <String[]>] (set Path) (mandatory), -LiteralPath <String[]> (set LiteralPath) (mandatory), [-Name <String[]>] (mandatory)
//	    refused (real, not modelled): -Filter, -Include, -Exclude, -Credential
//	    does: one value of a modelled registry key; a missing value is an error
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.management/get-itempropertyvalue?view=powershell-5.1
//	Get-NetFirewallPortFilter
//	    parameters: -All <SwitchParameter>, -AssociatedNetFirewallRule <CimInstance>
//	    refused (real, not modelled): -Protocol, -LocalPort, -PolicyStore, -CimSession, -AsJob
//	    does: the port filter of each rule piped in (-AssociatedNetFirewallRule) or of every rule (-All): Protocol (Any, TCP, UDP), LocalPort (Any or the rule's ports), RemotePort Any
//	    source: https://learn.microsoft.com/en-us/powershell/module/netsecurity/get-netfirewallportfilter
//	Get-NetFirewallRule
//	    parameters: [-Name <String[]>], -All <SwitchParameter>
//	    refused (real, not modelled): -DisplayName, -Direction, -Enabled, -PolicyStore, -CimSession, -AsJob
//	    does: the rules of firewall.json: a disk Install wrote has the stock WinRM rules (StockFirewallRules), then those New-NetFirewallRule created (by -Name), each with Name, DisplayName, Direction, Action, Enabled, Profile and RemoteAddress (on Windows a property of its address filter, Get-NetFirewallAddressFilter, which is not modelled); a missing name is CmdletizationQuery_NotFound_Name
//	    source: https://learn.microsoft.com/en-us/powershell/module/netsecurity/get-netfirewallrule
//	Get-Service (aliases gsv)
//	    parameter sets: Default (default), DisplayName, InputObject
//	    parameters: [-Name <String[]>] (set Default)
//	    refused (real, not modelled): -DisplayName, -Include, -Exclude, -InputObject, -ComputerName, -DependentServices, -RequiredServices
//	    does: the services of the host's service control manager (wildcards); a missing name is an error (NoServiceFoundForGivenName)
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.management/get-service?view=powershell-5.1
//	Get-TimeZone (aliases gtz)
//	    parameter sets: Name (default), Id, ListAvailable
//	    refused (real, not modelled): -Name, -Id, -ListAvailable
//	    does: the host's time zone (TimeZoneInfo with its Id), from the registry's TimeZoneKeyName
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.management/get-timezone?view=powershell-5.1
//	Get-WSManInstance
//	    parameters: [-ResourceURI <Uri>] (mandatory), -Enumerate <SwitchParameter>
//	    refused (real, not modelled): -SelectorSet, -Dialect, -Filter, -Fragment, -ComputerName, -ConnectionURI, -Credential, -Authentication, -SessionOption, -FilePath, -UseSSL, -Port
//	    does: -ResourceURI winrm/config/Listener -Enumerate: the listeners (Address, Transport, Port, Hostname, CertificateThumbprint) of the disk; any other resource or a -SelectorSet is refused
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.wsman.management/get-wsmaninstance
//	Get-WindowsFeature
//	    parameters: [-Name <String[]>]
//	    refused (real, not modelled): -Vhd, -ComputerName, -Credential, -LogPath
//	    does: the feature with Name, InstallState and Installed (InstallPending until the next boot); an unknown name outputs nothing
//	    source: https://learn.microsoft.com/en-us/powershell/module/servermanager/get-windowsfeature
//	Install-WindowsFeature (aliases Add-WindowsFeature)
//	    parameters: [-Name <Feature[]>] (mandatory)
//	    refused (real, not modelled): -Restart, -IncludeAllSubFeature, -IncludeManagementTools, -Source, -Vhd, -ComputerName, -Credential, -LogPath, -ConfigurationFilePath
//	    does: installs a known feature; RestartNeeded is Yes until the next boot completes it; an unknown name is an error
//	    source: https://learn.microsoft.com/en-us/powershell/module/servermanager/install-windowsfeature
//	Invoke-WebRequest (aliases iwr, wget, curl)
//	    parameters: [-Uri <Uri>] (mandatory), -OutFile <String>, -UseBasicParsing <SwitchParameter>, -Method <WebRequestMethod> {Default|Get|Head|Post|Put|Delete|Trace|Options|Merge|Patch}, -TimeoutSec <Int32>, -Proxy <Uri>
//	    refused (real, not modelled): -Headers, -Body, -UserAgent, -Credential, -PassThru, -InFile, -ContentType, -MaximumRedirection
//	    does: a real HTTP GET from this machine, through -Proxy when given (never HTTP_PROXY: Windows PowerShell 5.1 takes the proxy from -Proxy or Internet Options); -OutFile saves the body, else an object with StatusCode and Content; HTTP errors are WebException; at a site reachable only through its proxy (Faults.Egress) a direct connection out fails
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.utility/invoke-webrequest?view=powershell-5.1
//	Join-Path
//	    parameters: [-Path <String[]>] (mandatory), [-ChildPath <String>] (mandatory)
//	    refused (real, not modelled): -Resolve, -Credential
//	    does: each -Path joined with -ChildPath by the FileSystem provider: '/' read as '\', one '\' between the parts (Join-Path 'C:\C\abc\' '/etc/x' is C:\C\abc\etc\x); the drive must exist
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.management/join-path?view=powershell-5.1
//	Move-Item (aliases mv, move, mi)
//	    parameter sets: Path (default), LiteralPath
//	    parameters: [-Path <String[]>] (set Path) (mandatory), -LiteralPath <String[]> (set LiteralPath) (mandatory), [-Destination <String>], -Force <SwitchParameter>
//	    refused (real, not modelled): -Filter, -Include, -Exclude, -Credential, -PassThru
//	    does: moves/copies a file (into a directory destination, or to a path whose directory exists, else DirectoryNotFoundException); an existing destination file needs -Force to be replaced (Move-Item)
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.management/move-item?view=powershell-5.1
//	New-Item (aliases ni)
//	    parameter sets: pathSet (default), nameSet
//	    parameters: [-Path <String[]>] (mandatory in pathSet), -Name <String> (set nameSet) (mandatory), -ItemType <String>, -Value <Object>, -Force <SwitchParameter>
//	    refused (real, not modelled): -Credential
//	    does: -ItemType Directory (parents created; an existing one is an error without -Force) or File (with -Value); outputs the item
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.management/new-item?view=powershell-5.1
//	New-NetFirewallRule
//	    parameters: -DisplayName <String> (mandatory), -Name <String>, -Direction <Direction> {Inbound|Outbound}, -Action <Action> {NotConfigured|Allow|Block}, -Protocol <String>, -LocalPort <String[]>, -Enabled <Enabled> {True|False}, -Profile <Profile> {Any|Domain|Private|Public|NotApplicable}, -Description <String>, -Group <String>, -RemoteAddress <String[]>
//	    refused (real, not modelled): -RemotePort, -Program, -LocalAddress, -PolicyStore, -CimSession, -AsJob
//	    does: stores the rule (firewall.json) with its -Description, -Group, -Protocol (Any by default; TCP, UDP), -LocalPort (numbers, ranges, Any; only with TCP or UDP, else refused: Windows rejects a port with protocol Any), -Profile (Any by default; Domain, Private, Public, a list) and -RemoteAddress (Any by default; LocalSubnet, an address, a subnet by bit count or mask, a range a-b, a list), which the host's inbound filtering enforces (HostConfig.Firewall); -Profile NotApplicable and the other address keywords refused; an existing -Name is an error
//	    source: https://learn.microsoft.com/en-us/powershell/module/netsecurity/new-netfirewallrule
//	New-Object
//	    parameter sets: Net (default), Com
//	    parameters: [-TypeName <String>] (set Net) (mandatory), [-ArgumentList <Object[]>] (set Net), [-ComObject <String>] (set Com) (mandatory)
//	    refused (real, not modelled): -Strict, -Property
//	    does: -TypeName with -ArgumentList calls the type's constructor as [T]::new(...) does, for the types whose ::new() the engine models; an unknown type is TypeNotFound
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.utility/new-object?view=powershell-5.1
//	New-SelfSignedCertificate
//	    parameters: -DnsName <String[]>, -CertStoreLocation <String>, -KeyExportPolicy <KeyExportPolicy[]> {NonExportable|ExportableEncrypted|Exportable}, -FriendlyName <String>
//	    refused (real, not modelled): -Subject, -KeyAlgorithm, -KeyLength, -NotAfter, -NotBefore, -Type, -KeyUsage, -TextExtension, -Signer, -CloneCert, -Provider, -KeySpec, -HashAlgorithm, -KeyProtection, -Container, -SuppressOid, -TestRoot, -ExistingKey
//	    does: makes an RSA 2048 key and a self-signed certificate (CN = the first -DnsName, every -DnsName in the SAN, Client and Server Authentication, one year) in Cert:\LocalMachine\My with its key, which stays on the disk (nothing modelled exports it); outputs the X509Certificate2 (Thumbprint, RawData, DnsNameList). Only -CertStoreLocation Cert:\LocalMachine\My and -DnsName are modelled: without either the call is refused
//	    source: https://learn.microsoft.com/en-us/powershell/module/pki/new-selfsignedcertificate
//	New-Service
//	    parameters: [-Name <String>] (mandatory), [-BinaryPathName <String>] (mandatory), -DisplayName <String>, -Description <String>, -StartupType <ServiceStartMode> {Boot|System|Automatic|Manual|Disabled}
//	    refused (real, not modelled): -Credential, -DependsOn
//	    does: creates a stopped service in the service control manager with its -DisplayName and -Description (the Description value of its registry key); Boot and System start modes are refused by the SCM for a Win32 service
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.management/new-service?view=powershell-5.1
//	New-WSManInstance
//	    parameters: [-ResourceURI <Uri>] (mandatory), [-SelectorSet <Hashtable>] (mandatory), -ValueSet <Hashtable>
//	    refused (real, not modelled): -OptionSet, -ApplicationName, -ComputerName, -ConnectionURI, -Credential, -Authentication, -SessionOption, -FilePath, -UseSSL, -Port
//	    does: creates the HTTPS listener (-ResourceURI winrm/config/Listener -SelectorSet @{Address='*'; Transport='HTTPS'} -ValueSet @{Hostname=...; CertificateThumbprint=...}) bound to that certificate of Cert:\LocalMachine\My, serving at once on 5986 where the firewall admits it; a certificate not in the store, a Hostname other than its CN and an existing listener are refused, as is any other resource, selector or setting
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.wsman.management/new-wsmaninstance
//	Out-File
//	    parameter sets: ByPath (default), ByLiteralPath
//	    parameters: [-FilePath <String>] (set ByPath) (mandatory), -LiteralPath <String> (set ByLiteralPath) (mandatory), [-Encoding <String>] {unknown|string|unicode|bigendianunicode|utf8|utf7|utf32|ascii|default|oem}, -Append <SwitchParameter>, -NoNewline <SwitchParameter>, -InputObject <PSObject>
//	    refused (real, not modelled): -Force, -NoClobber, -Width
//	    does: writes the input as the console shows it, CRLF after each line, in -Encoding: unicode (UTF-16LE with a BOM, the default) or string, bigendianunicode, utf8, utf32 (with a BOM), ascii, default (code page 1252), oem (437); -Append adds at the end without a second BOM; -NoNewline concatenates strings; unknown, utf7, -Width, -NoClobber, -Force refused
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.utility/out-file?view=powershell-5.1
//	Out-Null
//	    parameters: -InputObject <PSObject>
//	    accepted, no effect here: -InputObject (Out-Null discards whatever it is given)
//	    does: discards its input
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/out-null?view=powershell-5.1
//	Out-String
//	    parameters: -InputObject <PSObject>, -Stream <SwitchParameter>
//	    refused (real, not modelled): -Width
//	    does: the input's text as one string (each object's lines, CRLF-terminated); -Stream: one string per line
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.utility/out-string?view=powershell-5.1
//	Remove-Item (aliases rm, del, erase, ri, rd, rmdir)
//	    parameter sets: Path (default), LiteralPath
//	    parameters: [-Path <String[]>] (set Path) (mandatory), -LiteralPath <String[]> (set LiteralPath) (mandatory), -Recurse <SwitchParameter>, -Force <SwitchParameter>
//	    refused (real, not modelled): -Filter, -Include, -Exclude, -Credential, -Stream
//	    accepted, no effect here: -Force (the file system models no read-only or hidden attributes, the only thing -Force overrides here)
//	    does: deletes a file, or a directory (its contents with -Recurse); a missing path is an error
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.management/remove-item?view=powershell-5.1
//	Remove-WSManInstance
//	    parameters: [-ResourceURI <Uri>] (mandatory), [-SelectorSet <Hashtable>] (mandatory)
//	    refused (real, not modelled): -OptionSet, -ApplicationName, -CertificateThumbprint, -ComputerName, -ConnectionURI, -Credential, -Authentication, -SessionOption, -FilePath, -UseSSL, -Port
//	    does: deletes the HTTP listener (-ResourceURI winrm/config/Listener -SelectorSet @{Address='*'; Transport='HTTP'}): the disk forgets it and port 5985 closes at once (HTTP.sys binds a port only while a URL on it is registered); a missing listener is the WS-Management fault of a resource not found; the HTTPS listener, any other resource or selector is refused
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.wsman.management/remove-wsmaninstance
//	Restart-Computer
//	    parameters: -Force <SwitchParameter>
//	    refused (real, not modelled): -ComputerName, -Wait, -Credential, -Timeout
//	    accepted, no effect here: -Force (without it Windows refuses only while other users are logged on interactively, and none are)
//	    does: the script finishes, then the host goes down and comes back after RebootDelay
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.management/restart-computer?view=powershell-5.1
//	Restart-Service
//	    parameter sets: InputObject (default), Default, DisplayName
//	    parameters: [-Name <String[]>] (set Default) (mandatory), -Force <SwitchParameter>
//	    refused (real, not modelled): -DisplayName, -InputObject, -PassThru, -Include, -Exclude
//	    does: stops then starts the service
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.management/restart-service?view=powershell-5.1
//	Select-Object (aliases select)
//	    parameters: [-Property <Object[]>], -InputObject <PSObject>, -ExpandProperty <String>, -First <Int32>, -Last <Int32>
//	    refused (real, not modelled): -ExcludeProperty, -Unique, -Skip, -SkipLast, -Wait, -Index
//	    does: -ExpandProperty (a missing property is an error), -Property (new objects with those properties), -First, -Last
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.utility/select-object?view=powershell-5.1
//	Set-Acl
//	    parameter sets: ByPath (default), ByLiteralPath, ByInputObject
//	    parameters: [-Path <String[]>] (set ByPath) (mandatory), -LiteralPath <String[]> (set ByLiteralPath) (mandatory), [-AclObject <Object>] (mandatory)
//	    refused (real, not modelled): -InputObject, -Passthru, -CentralAccessPolicy, -ClearCentralAccessPolicy, -Filter, -Include, -Exclude, -UseTransaction
//	    does: writes a Get-Acl object's DACL and protection to the path; needs WRITE_DAC (else "Attempted to perform an unauthorized operation."); an owner change, a token without WRITE_OWNER and an -AclObject Get-Acl did not make are refused
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.security/set-acl?view=powershell-5.1
//	Set-Content
//	    parameter sets: Path (default), LiteralPath
//	    parameters: [-Path <String[]>] (set Path) (mandatory), -LiteralPath <String[]> (set LiteralPath) (mandatory), [-Value <Object[]>] (mandatory), -NoNewline <SwitchParameter>, -Encoding <FileSystemCmdletProviderEncoding> {Unknown|String|Unicode|Byte|BigEndianUnicode|UTF8|UTF7|UTF32|Ascii|Default|Oem|BigEndianUTF32}, -Force <SwitchParameter>
//	    refused (real, not modelled): -Filter, -Include, -Exclude, -Credential, -PassThru, -Stream
//	    accepted, no effect here: -Force (the file system models no read-only or hidden attributes, the only thing -Force overrides here)
//	    does: writes the values, each followed by CRLF (none with -NoNewline), in -Encoding: Default (the ANSI code page 1252, also without -Encoding), Ascii, Oem (437), UTF8 (with a BOM), String/Unicode (UTF-16LE), BigEndianUnicode, UTF32 (each with a BOM at the file's start); Byte, UTF7, BigEndianUTF32, Unknown refused
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.management/set-content?view=powershell-5.1
//	Set-NetFirewallRule
//	    parameters: [-Name <String[]>] (mandatory), -RemoteAddress <String[]>, -Enabled <Enabled> {True|False}
//	    refused (real, not modelled): -DisplayName, -NewDisplayName, -Direction, -Action, -Protocol, -LocalPort, -RemotePort, -LocalAddress, -Profile, -Description, -Program, -PolicyStore, -CimSession, -PassThru, -AsJob
//	    does: changes the -RemoteAddress (as New-NetFirewallRule reads it) and -Enabled of the rules named by -Name in firewall.json; a missing name is CmdletizationQuery_NotFound_Name; a rule covering a port the host serves (5985, 5986, 22) is refused as not modelled, 5985 after Remove-WSManInstance excepted (no rule admitting anyone: its connections are dropped, else refused) (Windows applies the change at once, the host at its next boot); every other parameter is refused
//	    source: https://learn.microsoft.com/en-us/powershell/module/netsecurity/set-netfirewallrule
//	Set-Service
//	    parameters: [-Name <String>] (mandatory), -DisplayName <String>, -Description <String>, -StartupType <ServiceStartMode> {Boot|System|Automatic|Manual|Disabled}, -Status <String> {Running|Stopped|Paused}
//	    refused (real, not modelled): -InputObject, -ComputerName, -PassThru
//	    does: changes -StartupType, -DisplayName, -Description; -Status Running/Stopped starts or stops it
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.management/set-service?view=powershell-5.1
//	Set-StrictMode
//	    parameter sets: Version (default), Off
//	    parameters: -Off <SwitchParameter> (set Off) (mandatory)
//	    refused (real, not modelled): -Version
//	    does: -Off: strict mode stays off (the engine never turns it on); -Version refused
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/set-strictmode?view=powershell-5.1
//	Set-TimeZone (aliases stz)
//	    parameter sets: Name (default), Id, InputObject
//	    parameters: -Id <String> (set Id) (mandatory), -PassThru <SwitchParameter>
//	    refused (real, not modelled): -Name, -InputObject
//	    does: -Id sets the host's time zone (TimeZoneKeyName, as Windows spells the ID); an ID the host does not have is a terminating TimeZoneNotFound error
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.management/set-timezone?view=powershell-5.1
//	Set-WSManInstance
//	    parameters: [-ResourceURI <Uri>] (mandatory), [-SelectorSet <Hashtable>], -ValueSet <Hashtable>
//	    refused (real, not modelled): -OptionSet, -Dialect, -Fragment, -ApplicationName, -ComputerName, -ConnectionURI, -Credential, -Authentication, -SessionOption, -FilePath, -UseSSL, -Port
//	    does: changes the HTTPS listener's Hostname and CertificateThumbprint (-ResourceURI winrm/config/Listener -SelectorSet @{Address='*'; Transport='HTTPS'}); the next connection gets the new certificate. A missing listener, a certificate not in the store and a Hostname other than its CN are refused
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.wsman.management/set-wsmaninstance
//	Start-Process (aliases saps, start)
//	    parameters: [-FilePath <String>] (mandatory), [-ArgumentList <String[]>], -Wait <SwitchParameter>, -NoNewWindow <SwitchParameter>, -PassThru <SwitchParameter>, -WindowStyle <ProcessWindowStyle> {Normal|Hidden|Minimized|Maximized}
//	    refused (real, not modelled): -WorkingDirectory, -Credential, -RedirectStandardOutput, -RedirectStandardError, -RedirectStandardInput, -Verb, -LoadUserProfile, -UseNewEnvironment
//	    does: starts the program with -ArgumentList joined by spaces into one command line (which the program splits as CommandLineToArgvW does); with -Wait runs it to completion, whatever its subsystem (-PassThru: a System.Diagnostics.Process whose ExitCode is the program's), else returns at once while it runs on until it exits or the host goes down (-PassThru without -Wait refused: a process still running)
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.management/start-process?view=powershell-5.1
//	Start-Service (aliases sasv)
//	    parameter sets: InputObject (default), Default, DisplayName
//	    parameters: [-Name <String[]>] (set Default) (mandatory)
//	    refused (real, not modelled): -DisplayName, -InputObject, -PassThru, -Include, -Exclude
//	    does: starts the service through the service control manager; a failure is CouldNotStartService with the SCM's reason
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.management/start-service?view=powershell-5.1
//	Start-Sleep (aliases sleep)
//	    parameter sets: Seconds (default), Milliseconds
//	    parameters: [-Seconds <Int32>] (set Seconds) (mandatory), -Milliseconds <Int32> (set Milliseconds) (mandatory)
//	    does: sleeps (cancelled with the command)
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.utility/start-sleep?view=powershell-5.1
//	Stop-Computer
//	    parameters: -Force <SwitchParameter>
//	    refused (real, not modelled): -ComputerName, -Credential
//	    accepted, no effect here: -Force (without it Windows refuses only while other users are logged on interactively, and none are)
//	    does: the command finishes, then the host goes down for good (HostConfig.OnShutdown)
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.management/stop-computer?view=powershell-5.1
//	Stop-Service (aliases spsv)
//	    parameter sets: InputObject (default), Default, DisplayName
//	    parameters: [-Name <String[]>] (set Default) (mandatory), -Force <SwitchParameter>
//	    refused (real, not modelled): -DisplayName, -InputObject, -PassThru, -Include, -Exclude, -NoWait
//	    does: stops the service
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.management/stop-service?view=powershell-5.1
//	Test-NetConnection (aliases TNC)
//	    parameters: [-ComputerName <String>], -Port <Int32>, [-CommonTCPPort <String>] {HTTP|RDP|SMB|WINRM}, -InformationLevel <String> {Quiet|Detailed}
//	    refused (real, not modelled): -TraceRoute, -Hops, -DiagnoseRouting, -ConstrainSourceAddress, -ConstrainInterface
//	    does: a real TCP connect from this machine to -ComputerName on -Port or -CommonTCPPort; -InformationLevel Quiet returns a Boolean, else a TestNetConnectionResult with TcpTestSucceeded; a name that does not resolve fails the test
//	    source: https://learn.microsoft.com/en-us/powershell/module/nettcpip/test-netconnection
//	Test-Path
//	    parameter sets: Path (default), LiteralPath
//	    parameters: [-Path <String[]>] (set Path) (mandatory), -LiteralPath <String[]> (set LiteralPath) (mandatory), -PathType <TestPathType> {Any|Container|Leaf}
//	    refused (real, not modelled): -Filter, -Include, -Exclude, -Credential, -IsValid, -OlderThan, -NewerThan
//	    does: True or False; -PathType Leaf/Container; registry keys the host models
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.management/test-path?view=powershell-5.1
//	Where-Object (aliases ?, where)
//	    parameters: [-FilterScript <ScriptBlock>], -InputObject <PSObject>
//	    refused (real, not modelled): -Property, -Value, -EQ, -CEQ, -NE, -CNE, -GT, -CGT, -LT, -CLT, -GE, -CGE, -LE, -CLE, -Like, -CLike, -NotLike, -CNotLike, -Match, -CMatch, -NotMatch, -CNotMatch, -Contains, -CContains, -NotContains, -CNotContains, -In, -CIn, -NotIn, -CNotIn, -Is, -IsNot
//	    does: passes the input objects for which the script block ($_ the object) is true
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/where-object?view=powershell-5.1
//	Write-Error
//	    parameters: [-Message <String>] (mandatory), -ErrorId <String>, -TargetObject <Object>
//	    refused (real, not modelled): -Category, -RecommendedAction, -CategoryActivity, -CategoryReason, -CategoryTargetName, -CategoryTargetType, -Exception, -ErrorRecord
//	    does: writes a non-terminating error record (WriteErrorException)
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.utility/write-error?view=powershell-5.1
//	Write-Host
//	    parameters: [-Object <Object>], -NoNewline <SwitchParameter>, -Separator <Object>, -ForegroundColor <ConsoleColor> {Black|DarkBlue|DarkGreen|DarkCyan|DarkRed|DarkMagenta|DarkYellow|Gray|DarkGray|Blue|Green|Cyan|Red|Magenta|Yellow|White}, -BackgroundColor <ConsoleColor> {Black|DarkBlue|DarkGreen|DarkCyan|DarkRed|DarkMagenta|DarkYellow|Gray|DarkGray|Blue|Green|Cyan|Red|Magenta|Yellow|White}
//	    accepted, no effect here: -ForegroundColor (colours are not text: WinRM, SSH and guest operations carry the text only); -BackgroundColor (colours are not text: WinRM, SSH and guest operations carry the text only)
//	    does: writes text to the host (stdout), not to the pipeline; colours are accepted and ignored
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.utility/write-host?view=powershell-5.1
//	Write-Output (aliases echo, write)
//	    parameters: [-InputObject <PSObject[]>] (mandatory), -NoEnumerate <SwitchParameter>
//	    does: writes its objects to the pipeline (arrays enumerated)
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.utility/write-output?view=powershell-5.1
//	Write-Verbose
//	    parameters: [-Message <String>] (mandatory)
//	    does: nothing while $VerbosePreference is SilentlyContinue (its default) and -Verbose is not given; the verbose stream is refused otherwise
//	    source: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.utility/write-verbose?view=powershell-5.1
//
//	.NET types (casts, -is, static members):
//	    [System.Array]  https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_type_accelerators
//	    [System.Boolean]  https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_type_accelerators
//	    [System.Byte[]]  https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_type_accelerators
//	    [System.Byte]  https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_type_accelerators
//	    [System.Collections.Hashtable]  https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_type_accelerators
//	    [System.Collections.Specialized.OrderedDictionary]  https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_type_accelerators
//	    [System.Console] ::error, ::out  https://learn.microsoft.com/en-us/dotnet/api/system.console
//	    [System.Convert] ::frombase64string(), ::tobase64string()  https://learn.microsoft.com/en-us/dotnet/api/system.convert
//	    [System.Double]  https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_type_accelerators
//	    [System.Environment] ::getenvironmentvariable(), ::is64bitoperatingsystem, ::machinename, ::newline, ::osversion, ::processorcount, ::setenvironmentvariable()  https://learn.microsoft.com/en-us/dotnet/api/system.environment
//	    [System.Exception]  https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_type_accelerators
//	    [System.IO.Directory] ::createdirectory(), ::exists()  https://learn.microsoft.com/en-us/dotnet/api/system.io.directory
//	    [System.IO.FileSystemWatcher] ::new()  https://learn.microsoft.com/en-us/dotnet/api/system.io.filesystemwatcher
//	    [System.IO.File] ::create(), ::exists(), ::opentext(), ::openwrite(), ::readallbytes(), ::readalllines(), ::readalltext(), ::writeallbytes(), ::writealllines(), ::writealltext()  https://learn.microsoft.com/en-us/dotnet/api/system.io.file
//	    [System.IO.Path] ::combine(), ::getdirectoryname(), ::getfilename(), ::getfullpath()  https://learn.microsoft.com/en-us/dotnet/api/system.io.path
//	    [System.IO.WatcherChangeTypes] ::created, ::renamed  https://learn.microsoft.com/en-us/dotnet/api/system.io.watcherchangetypes
//	    [System.Int32]  https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_type_accelerators
//	    [System.Int64]  https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_type_accelerators
//	    [System.Management.Automation.ErrorRecord]  https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_type_accelerators
//	    [System.Management.Automation.PSCustomObject]  https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_type_accelerators
//	    [System.Management.Automation.PSObject]  https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_type_accelerators
//	    [System.Management.Automation.RuntimeException]  https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_type_accelerators
//	    [System.Management.Automation.ScriptBlock]  https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_type_accelerators
//	    [System.Math] ::max(), ::min(), ::pow()  https://learn.microsoft.com/en-us/dotnet/api/system.math
//	    [System.Net.IPAddress] ::any, ::loopback, ::new(), ::parse()  https://learn.microsoft.com/en-us/dotnet/api/system.net.ipaddress
//	    [System.Object[]]  https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_type_accelerators
//	    [System.Object]  https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_type_accelerators
//	    [System.Security.AccessControl.FileSystemAccessRule] ::new()  https://learn.microsoft.com/en-us/dotnet/api/system.security.accesscontrol.filesystemaccessrule
//	    [System.String[]]  https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_type_accelerators
//	    [System.String]  https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_type_accelerators
//	    [System.Text.Encoding] ::ascii, ::bigendianunicode, ::default, ::unicode, ::utf32, ::utf8  https://learn.microsoft.com/en-us/dotnet/api/system.text.encoding
//	    [System.Text.UTF8Encoding] ::new()  https://learn.microsoft.com/en-us/dotnet/api/system.text.utf8encoding
//	    [System.Void]  https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_type_accelerators
//
// End of the command table.
//
// # Named steps and faults
//
// A script names its step with a comment line "# step: <name>" (StepComment).
// HostConfig.Faults (and Host.SetFaults at run time) can refuse connections
// (every listener closed: a host that is down),
// fail every authentication, and for a step (or a script matching a regexp)
// exit non-zero with a given stderr, delay, hang until cancelled, reboot the
// host as the step arrives, or restart a service (RestartService: VMTools,
// to restart VMware Tools under the step) and then run it. Faults.KubeletNeverReady makes the simulated
// kubelet register its Node but never report Ready; Faults.KubeletNotReady
// holds it NotReady until the fault is cleared; Faults.HNSLostOnReboot loses
// the host's HNS networks and policies at every boot (Host.BootID says
// which) and fails their creation again (kubeletsim's flanneld).
//
// # The service control manager, the registry, sc.exe, nssm and containerd
//
// (Behaviours modelled by the SCM work; merge into the package's table of
// modelled behaviours as a separate group.)
//
// The registry (registry.go) is HKEY_LOCAL_MACHINE with REG_SZ,
// REG_EXPAND_SZ, REG_MULTI_SZ, REG_DWORD and REG_BINARY values, saved to
// <Dir>/registry.json: it survives reboots and clones copy it with the disk
// (internal/sandbox/vmtools/disk.go). It holds
// HKLM\SOFTWARE\Microsoft\Windows NT\CurrentVersion (the configured build,
// rewritten at every boot), HKLM\SYSTEM\CurrentControlSet\Control's
// SystemStartOptions (the boot's loader options, rewritten at every boot
// from the BCD store's TESTSIGNING that bcdedit.exe sets under
// HKLM\BCD00000000), HKLM\SYSTEM\CurrentControlSet\Control\Session
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
//	  and 2.x; CRI sandbox image and CNI dirs (ContainerdConfig) server/config (2.2.7), plugins/cri/*/plugin.go,
//	  with each release's default pause image                internal/cri/config/config.go (v2.0.0 to v2.3.4)
//	containerd's registry: config_path and hosts.toml (hosts  containerd docs/hosts.md, docs/cri/registry.md;
//	  in file order, then server or the upstream; ?ns=; 404,  core/remotes/docker/config/hosts.go,
//	  4xx and failed requests try the next host; Basic         resolver.go, authorizer.go; internal/cri/config/
//	  challenge answered once with registry.configs.<host>.   config.go (configs deprecated), internal/cri/
//	  auth, deprecated with its warning; loopback hosts only; server/images/image_pull.go (v2.3.4);
//	  kubeletsim's upstream fallback serves images.go's only)
//	  for ctr --hosts-dir and kubeletsim's CRI pulls          registry_pull.go, kubeletsim/registry_pull.go
//	config.toml's bytes judged by the real TOML library: 1.7  pelletier/go-toml v1.9.5 LoadBytes (drops a BOM),
//	  accepts a UTF-8 BOM; UTF-16 and (2.x) a UTF-8 BOM fail  go-toml/v2 v2.4.3 Unmarshal (drops none)
//	sshd service program; creates missing host keys in      PowerShell/openssh-portable (install-sshd.ps1,
//	  C:\ProgramData\ssh at start and at boot (SSHHostKeyFile) contrib/win32/win32compat/wmain_sshd.c)
//	SSH connections: each loads the host key from the disk; v9.5.0.0 sshd.c (main, "load host keys")
//	  none there, the connection closes before key exchange
//	sshd_config: OpenSSH Server's stock file (Install); sshd  contrib/win32/openssh/sshd_config; sshd.c
//	  reads PasswordAuthentication (global section, first     (send_rexec_state); sshd_config(5) ("the first
//	  value wins, default yes) at its start and boot; no ->   obtained value will be used", Match)
//	  password logins refused; set in a Match block: not
//	  modelled, every password login refused
//	kubelet (internal/sandbox/kubeletsim): Running only with        kubernetes cmd/kubelet/app/options/osflags_windows.go,
//	  --windows-service; fails under nssm with it            cmd/kubelet/app/server.go (initForOS)
//	kube-log-runner: Go flags up to the program, -log-file   k8s.io/component-base/logs/kube-log-runner (v1.36.3)
//	  (O_APPEND|O_CREATE: no directory -> log.Fatal),         kube-log-runner.go, internal/logrotation; the
//	  -log-file-size rotation, -redirect-stderr; the child    service layout of kubernetes-sigs/image-builder
//	  reports to the SCM                                      roles/kubernetes/tasks/sc.yml (98cbbbfe)
//	host-local (CNI IPAM): VERSION/ADD/DEL, ranges or         containernetworking/plugins plugins/ipam/host-local
//	  subnet, dataDir reservations, host bits refused         (range.go, allocator.go, disk/backend.go)
//	powershell.exe as a process: -Command/-File parsed as    about_PowerShell_exe (5.1); kubernetes.io "Create a
//	  powershell.exe does, the process's environment          Windows HostProcess Pod"
//	kube-proxy, flanneld (internal/sandbox/kubeletsim, agents)       see internal/sandbox/kubeletsim/doc.go
//	calico-node, calico/calico-ipam (kubeletsim, agents, CNI)       see internal/sandbox/kubeletsim/doc.go
//
// Faults: Faults.ServiceExits makes a service's process exit After it
// reported Running (a crash: recovery actions apply); Faults.RebootMidReply
// cuts the WinRM Receive reply of a matching command mid-body and reboots
// the host.
//
// # Guest operations (VMware Tools)
//
// guestops.go is what VMware Tools does for vCenter's guest operations
// (internal/sandbox/vmtools answers the vSphere calls with it): GuestLogon
// checks the built-in Administrator's name and password (and
// Faults.FailAuth; other accounts: "Accounts and UAC remote restrictions");
// StartProgram runs `"<ProgramPath>" <Arguments>` as CreateProcess would,
// with no console anyone reads: cmd.exe with /c only (no leading quote), its
// output redirections n>file, n>>file and n>&m applied (input redirection,
// pipes and & refused as not modelled), powershell.exe by its own argument
// rules, other programs by Run. Each is logged with the transport
// "vmtools". Processes and their exit codes are listed for 5 minutes after
// they end and forgotten at a restart; files are read, written and deleted
// on the host's disk.
//
// Guest operations are VMware Tools' work: they need the VMTools service
// (vmtoolsd, below) running; while it is stopped or restarting every guest
// operation fails with ErrToolsNotRunning (vCenter's
// GuestOperationsUnavailable) and HostConfig.OnToolsChange tells the
// sandbox, which reports guest.toolsRunningStatus guestToolsNotRunning and
// guest.guestOperationsReady false. vmtoolsd keeps the processes it
// started in its own memory (open-vm-tools services/plugins/vix/vixTools.c,
// startedProcessList): after a VMTools restart a process an earlier
// vmtoolsd started is listed only while it runs, with no exit code, and
// not at all once it ends, so whoever waits for its exit code loses it.
// The process itself goes on: Windows does not end a process with the one
// that created it (learn.microsoft.com/windows/win32/procthread/terminating-a-process);
// whether vmtoolsd ends what it started through a job object is not
// documented and not modelled.
//
// # Stock installation (stock_services.go, install.go)
//
// Install(dir, StockInstallation()) writes the disk of a fresh Windows
// Server 2019, 2022 or 2025 with VMware Tools, as the sandbox's base
// templates carry it:
//
//	Behaviour                                              Upstream source
//	services (registry keys under Services): RpcEptMapper, "Guidance on disabling system services on Windows
//	  DcomLaunch, RpcSs, EventLog, BFE, mpssvc,            Server with Desktop Experience" (learn.microsoft.com/
//	  SystemEventsBroker, Schedule, nsi, Dnscache,         windows-server/security/windows-services/security-
//	  LanmanServer (Automatic); WinRM (Automatic, delayed); guidelines-for-disabling-system-services-in-windows-
//	  wuauserv, W32Time, TrustedInstaller (Manual); their  server): names, display names, start types (the
//	  svchost groups, accounts (LocalSystem, LocalService, defaults of Server 2019 on); sc.exe qc of a stock
//	  NetworkService) and dependencies among them          install (no public page) for ImagePath, ObjectName,
//	                                                       DependOnService
//	VMTools "VMware Tools": vmtoolsd.exe under C:\Program  VMware Tools Administration, "VMware Tools Services"
//	  Files\VMware\VMware Tools, Automatic, LocalSystem;   (docs.vmware.com ... GUID-0BD592B1): vmtoolsd.exe
//	  guest operations while it runs (above)               starts with the guest, runs programs for automation
//	svchost.exe and TrustedInstaller.exe: service hosts    (simulator rule: never pretend what is not modelled)
//	  held Running, doing nothing modelled; run from a
//	  command line -> refused; stopping one of their
//	  services -> refused as not modelled (the host going
//	  down stops them)
//	vmtoolsd.exe from a command line -> refused            (the same rule)
//	inbound firewall rules: WinRM HTTP-In for Domain and   Enable-PSRemoting (learn.microsoft.com), StockFirewallRules
//	  Private from anywhere, Public from the local subnet
//	default DACLs of C:\ and its system folders            "File system security" below (acl.go)
//
// Not modelled, so not there: trigger starts (wuauserv, W32Time and
// Dnscache start on events on Windows; here a Manual service runs when
// something starts it), dependencies on kernel drivers (mpsdrv, HTTP,
// srv2, nsiproxy), every other service of the installation, VGAuthService
// (SAML guest authentication), and the event logs (System, Application,
// Security: no cmdlet here reads them).
//
// # Event logs
//
// Host.Events(log) returns a simulated event log (scriptblocklog.go). The
// PowerShell engine writes Microsoft-Windows-PowerShell/Operational event
// 4104 as Windows PowerShell 5.1 does (CompiledScriptBlock.cs at
// github.com/PowerShell/PowerShell commit 60b3b304f2, the 5.1 code base):
// for every script a powershell.exe runs, at level Warning when a word of
// it (letters and '-' only) is one of the suspicious signatures
// (CheckSuspiciousContent), even with no logging policy; for every script,
// at level Verbose unless suspicious, when the ScriptBlockLogging policy's
// EnableScriptBlockLogging is 1; never when it is 0. Scripts of 20,000
// characters or more are split into numbered segments. A signature with a
// digit never matches a word ("FromBase64String" is the words "FromBase" and
// "String"), as in 5.1. Not modelled: the parser's own suspicious-syntax
// marks, nested script blocks logged on their own, protected event logging,
// the other event logs.
//
// # Accounts and UAC remote restrictions
//
// A host knows its local accounts (accounts.go): the built-in Administrator
// (HostConfig.AdminUser, RID 500 whatever its name: renaming the account
// keeps its SID) and HostConfig.LocalAccounts with their groups. WinRM (Basic
// and NTLM) and SSH (password) log any of them on; SSH public keys stay the
// built-in Administrator's.
//
// A WinRM or SSH logon is a network logon. Its token is elevated for a member
// of Administrators only when "User Account Control and remote restrictions"
// (learn.microsoft.com/troubleshoot/windows-server/windows-security/
// user-account-control-and-remote-restriction) lets it be: a local
// administrator other than the built-in Administrator gets a filtered token
// (Administrators deny-only, as a standard user) unless
// HKLM\SOFTWARE\Microsoft\Windows\CurrentVersion\Policies\System
// LocalAccountTokenFilterPolicy is 1 (absent or 0 is Windows' default); the
// built-in Administrator gets a full token unless FilterAdministratorToken
// is 1 ("User Account Control: Admin Approval Mode for the Built-in
// Administrator account", default Disabled: learn.microsoft.com/
// previous-versions/windows/it-pro/windows-10/security/threat-protection/
// security-policy-settings/user-account-control-admin-approval-mode-for-the-
// built-in-administrator-account; the registry value is listed in
// learn.microsoft.com/windows/security/application-security/
// application-control/user-account-control/settings-and-configuration).
// The logon's environment is the account's profile, C:\Users\<name>.
//
// The token rides in the context of everything the logon runs; a process
// the service control manager starts has none and runs as LocalSystem
// (elevated). Every administrative operation the host models asks
// elevated(ctx) in uac.go, and a filtered token is refused as Windows
// refuses it (ERROR_ACCESS_DENIED, 5, HRESULT 0x80070005):
//   - file reads and writes the DACL does not grant (see "File system
//     security"): under C:\Windows, C:\Program Files (x86), C:\Program Files
//     and C:\ProgramData a filtered token may read only; a folder at the
//     root (C:\k) it may create. "Access to the path '...' is denied."
//     (UnauthorizedAccessException).
//   - HKLM writes ([Environment]::SetEnvironmentVariable(..., 'Machine')):
//     "Requested registry access is not allowed." (SecurityException).
//   - the service control manager (New-Service, Set-Service, Start-,
//     Stop-, Restart-Service: "Service '...' cannot be ... due to the
//     following error: Access is denied"; sc.exe other than its queries:
//     "[SC] OpenSCManager FAILED 5:" for create, "[SC] OpenService FAILED 5:"
//     otherwise, exit code 5). Creating a service needs SC_MANAGER_CREATE_SERVICE
//     and starting, stopping or changing one needs rights that only
//     Administrators and SYSTEM hold by default ("Service Security and Access
//     Rights", learn.microsoft.com/windows/win32/services/service-security-and-access-rights).
//   - Install-WindowsFeature, Add-WindowsCapability, New-NetFirewallRule,
//     Restart-Computer, Stop-Computer: "Access is denied. (Exception from
//     HRESULT: 0x80070005 (E_ACCESSDENIED))".
//   - sysprep.exe (its manifest requires an administrator): CreateProcess
//     fails with ERROR_ELEVATION_REQUIRED (740).
//   - every other native program (nssm, containerd, ctr, shutdown.exe, the
//     kubelet...) and any cmdlet uac.go does not classify: "Access is
//     denied.", exit code 5. The simulator does not model which of them a
//     standard user could run, so it refuses them rather than let one
//     succeed (TestUACClassifiesEveryCmdlet keeps the cmdlet table complete).
//
// Guest operations (VMware Tools) log on through LogonUser in the guest;
// what token a non-RID-500 administrator's guest programs get under UAC is
// not in VMware's documentation this project found (community reports, e.g.
// github.com/vmware/pyvmomi-community-samples/issues/310, say programs run
// without administrator rights). So GuestLogon admits the built-in
// Administrator only and refuses every other account as not modelled
// (vmtools answers NotImplemented), never pretending either way.
//
// # File system security
//
// Every file and directory has an owner and a DACL (acl.go, where each rule
// cites its source): allow ACEs with icacls' rights and the inheritance flags
// OI CI IO NP, inherited by new children by the ACE inheritance rules
// (CREATOR OWNER becomes the owner), protected DACLs inheriting nothing.
// The defaults are Windows Server's: C:\ gives SYSTEM and Administrators
// full control, Users read and execute and "create folders" (CI)(AD) and
// "create files" (CI)(IO)(WD), CREATOR OWNER full control, so a folder made
// at C:\ lets every local user read its files and add files; C:\Windows,
// C:\Program Files (x86), C:\Program Files and C:\ProgramData give Users
// read and execute only; C:\Windows\Temp lets Users create files; a profile
// C:\Users\<name> is its user's, SYSTEM's and Administrators'. Every read
// (Get-Content, Get-FileHash, [IO.File] reads, cmd's type, SFTP) needs
// FILE_READ_DATA, every write FILE_WRITE_DATA on the file or FILE_ADD_FILE /
// FILE_ADD_SUBDIRECTORY on its directory, every delete DELETE or the
// directory's FILE_DELETE_CHILD, for the token of the logon (LocalSystem
// for services); a refusal is "Access to the path '...' is denied."
// (UnauthorizedAccessException). An object a standard user creates is
// owned by that user; one an administrator or LocalSystem creates by
// Administrators. Get-Acl (READ_CONTROL) and Set-Acl (WRITE_DAC) read and
// write the same descriptors, with the FileSystemAccessRule methods listed
// in pscmdlets_acl.go. icacls /setowner (elevated tokens only: icacls uses
// the restore privilege) changes an owner, /reset drops explicit ACEs, /T
// applies to everything beneath too. Not modelled: deny ACEs, SACLs and
// integrity labels, another way to change an owner, TrustedInstaller's
// ownership of system files,
// ProgramData's "Users may create folders" ACE (a user is refused there),
// explicit ACEs kept across a move (a moved object inherits from its new
// place). ACLs are kept in <Dir>/fs/acl.json, so clones copy them.
//
// # WinRM details
//
// Receive is a long poll bounded by the request's OperationTimeout (at most
// 60s); on expiry the w:TimedOut fault (code 2150858793, text containing
// "OperationTimeout") tells the client to poll again. Unknown shells get
// w:InvalidSelectors, requests over MaxEnvelopeSizeKB get w:EncodingLimit,
// bad credentials HTTP 401 with a "WWW-Authenticate" header for each scheme
// the service allows. NTLM authenticates the TCP connection: a request
// without an Authorization header on a connection that completed the
// handshake is the connection's user's (HTTP.sys caches NTLM credentials on
// keep-alive connections: learn.microsoft.com/windows/win32/http/credential-caching),
// a NEGOTIATE on it starts a new handshake, and an AUTHENTICATE message sent
// on another connection than its CHALLENGE fails, as on Windows. An empty
// POST only authenticates: 200 for the handshake's last leg, and for one
// without an Authorization header over HTTPS; over HTTP (AllowUnencrypted
// false) an empty POST without one is a message that is not encrypted, a 401
// offering Negotiate, so a client that authenticates before every message
// (masterzen/winrm's NewEncryption) authenticates again, while encrypted
// messages on the connection (pywinrm's, the provider's) are served.
//
// With HostConfig.Firewall, Windows Defender Firewall's inbound rules
// (firewall.json: the disk's, New-NetFirewallRule's) decide, at each boot,
// which of the WinRM HTTP, WinRM HTTPS and SSH ports admit the clients (by
// profile, and by -RemoteAddress against where the clients are:
// firewall_addr.go). A port no rule admits drops connection attempts,
// whether a listener serves it or not: they go unanswered until the
// client's own dial timeout, as Windows blocks inbound traffic by default
// and in stealth mode answers nothing (the firewall CSP's
// DefaultInboundAction and DisableStealthMode,
// learn.microsoft.com/windows/client-management/mdm/firewall-csp). The
// simulator holds such a port with a listener whose accept queue is full,
// so the kernel drops the SYNs for any client process (firewall_drop.go
// says how, and its limits: Linux only). A rule whose -RemoteAddress names
// addresses, subnets or ranges admits each connection by its own source
// address ("network packets with matching IP addresses match this rule",
// New-NetFirewallRule): a socket filter on the port drops the SYNs of the
// other sources, whose connect times out (firewall_scope.go; the sandbox's
// processes connect from 127.0.0.1, seen at Firewall.ClientAddress when
// set; a test stands for a foreign host by binding another loopback
// source). A port a rule admits with nothing listening refuses at once, as
// a host that is down does on every port. The kubelet's port 10250 is not
// among the host's ports: kubeletsim serves no kubelet API (the API
// server's pods/log, exec and metrics through the kubelet are not
// modelled), so there is nothing behind the firewall there to admit.
//
// The WinRM service's configuration (HostConfig.WinRM) is a stock Windows
// Server's unless a test changes it: AllowUnencrypted false, Basic false,
// Kerberos and Negotiate true ([MS-WSMV] 2.2.4.34). Basic when off is a 401
// offering Negotiate and Kerberos; a clear-text SOAP message on HTTP is a 401
// (NTLM) or a 500 (Basic); NTLM with message encryption ([MS-WSMV] 2.2.9.1.1,
// sealed per [MS-NLMP] 3.4) is served, its replies sealed. httpauth.go
// cites the source of each answer, ntlmseal.go and wsman_encrypted.go the
// specification sections they follow.
package winsim

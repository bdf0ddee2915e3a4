########## prepare
# step: prepare
$ErrorActionPreference = 'Stop'

New-Item -ItemType Directory -Force -Path 'C:\k' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\k\downloads' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\Program Files\containerd' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\opt\cni\bin' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\etc\cni\net.d' | Out-Null
Write-Output 'directories ready'

########## agent-dirs
# step: agent-dirs
$ErrorActionPreference = 'Stop'
# The directories the node's LocalSystem agents read and write, created at
# image build, owned by Administrators, with a protected DACL that only
# LocalSystem and Administrators hold (bootstrap.AgentDirsStep): the
# well-known SIDs S-1-5-18 and S-1-5-32-544, whatever the system's language.
New-Item -ItemType Directory -Force -Path 'C:\k' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\k\downloads' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\k\pki' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\var\lib\kubelet' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\var\log\kubelet' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\var\log\pods' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\var\log\containers' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\etc\cni\net.d' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\opt\cni\bin' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\var\lib\kube-proxy-windows-calico' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\var\lib\calico-node-windows' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\var\lib\calico' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\CalicoWindows' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\var\lib\kube-proxy-windows' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\var\lib\kube-flannel-windows' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\etc\kube-flannel' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\run\flannel' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\sourcevip' | Out-Null
$out = icacls.exe 'C:\k' /setowner '*S-1-5-32-544' /t /c /q
if ($LASTEXITCODE) { throw ('icacls.exe could not make Administrators the owner of ' + 'C:\k' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\k' /reset /t /c /q
if ($LASTEXITCODE) { throw ('icacls.exe could not reset the ACLs beneath ' + 'C:\k' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\k' /inheritance:r /grant:r '*S-1-5-18:(OI)(CI)F' '*S-1-5-32-544:(OI)(CI)F' /q
if ($LASTEXITCODE) { throw ('icacls.exe could not restrict ' + 'C:\k' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\var' /setowner '*S-1-5-32-544' /t /c /q
if ($LASTEXITCODE) { throw ('icacls.exe could not make Administrators the owner of ' + 'C:\var' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\var' /reset /t /c /q
if ($LASTEXITCODE) { throw ('icacls.exe could not reset the ACLs beneath ' + 'C:\var' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\var' /inheritance:r /grant:r '*S-1-5-18:(OI)(CI)F' '*S-1-5-32-544:(OI)(CI)F' /q
if ($LASTEXITCODE) { throw ('icacls.exe could not restrict ' + 'C:\var' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\etc' /setowner '*S-1-5-32-544' /t /c /q
if ($LASTEXITCODE) { throw ('icacls.exe could not make Administrators the owner of ' + 'C:\etc' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\etc' /reset /t /c /q
if ($LASTEXITCODE) { throw ('icacls.exe could not reset the ACLs beneath ' + 'C:\etc' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\etc' /inheritance:r /grant:r '*S-1-5-18:(OI)(CI)F' '*S-1-5-32-544:(OI)(CI)F' /q
if ($LASTEXITCODE) { throw ('icacls.exe could not restrict ' + 'C:\etc' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\run' /setowner '*S-1-5-32-544' /t /c /q
if ($LASTEXITCODE) { throw ('icacls.exe could not make Administrators the owner of ' + 'C:\run' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\run' /reset /t /c /q
if ($LASTEXITCODE) { throw ('icacls.exe could not reset the ACLs beneath ' + 'C:\run' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\run' /inheritance:r /grant:r '*S-1-5-18:(OI)(CI)F' '*S-1-5-32-544:(OI)(CI)F' /q
if ($LASTEXITCODE) { throw ('icacls.exe could not restrict ' + 'C:\run' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\opt' /setowner '*S-1-5-32-544' /t /c /q
if ($LASTEXITCODE) { throw ('icacls.exe could not make Administrators the owner of ' + 'C:\opt' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\opt' /reset /t /c /q
if ($LASTEXITCODE) { throw ('icacls.exe could not reset the ACLs beneath ' + 'C:\opt' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\opt' /inheritance:r /grant:r '*S-1-5-18:(OI)(CI)F' '*S-1-5-32-544:(OI)(CI)F' /q
if ($LASTEXITCODE) { throw ('icacls.exe could not restrict ' + 'C:\opt' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\CalicoWindows' /setowner '*S-1-5-32-544' /t /c /q
if ($LASTEXITCODE) { throw ('icacls.exe could not make Administrators the owner of ' + 'C:\CalicoWindows' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\CalicoWindows' /reset /t /c /q
if ($LASTEXITCODE) { throw ('icacls.exe could not reset the ACLs beneath ' + 'C:\CalicoWindows' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\CalicoWindows' /inheritance:r /grant:r '*S-1-5-18:(OI)(CI)F' '*S-1-5-32-544:(OI)(CI)F' /q
if ($LASTEXITCODE) { throw ('icacls.exe could not restrict ' + 'C:\CalicoWindows' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\sourcevip' /setowner '*S-1-5-32-544' /t /c /q
if ($LASTEXITCODE) { throw ('icacls.exe could not make Administrators the owner of ' + 'C:\sourcevip' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\sourcevip' /reset /t /c /q
if ($LASTEXITCODE) { throw ('icacls.exe could not reset the ACLs beneath ' + 'C:\sourcevip' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\sourcevip' /inheritance:r /grant:r '*S-1-5-18:(OI)(CI)F' '*S-1-5-32-544:(OI)(CI)F' /q
if ($LASTEXITCODE) { throw ('icacls.exe could not restrict ' + 'C:\sourcevip' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
Write-Output 'agent directories protected'

########## windows-update-KB5070010
# step: windows-update-KB5070010
$ErrorActionPreference = 'Stop'
# Download one update package, verify its SHA-256, install it and restart
# when it needs one. A .cab goes through DISM /Online /Add-Package in this
# session. A .msu goes through wusa.exe in a scheduled task as SYSTEM: wusa
# run from a WinRM (or SSH) session installs nothing and exits with 5
# ERROR_ACCESS_DENIED (KB2773898), while DISM takes a .msu on a running
# system only from Windows 11 21H2 (build 22000) on, not on Server 2019 and
# 2022. This step waits for the task's result file with a
# FileSystemWatcher. wusa.exe is a GUI-subsystem program: `& wusa.exe`
# returns at once and leaves $LASTEXITCODE as it was, so the task waits for
# it with Start-Process -Wait and takes -PassThru's ExitCode. Whether the
# package is really installed is read back afterwards (Get-HotFix, the
# windows-updates-installed step). Every value is a single-quoted literal
# (psquote).
$kb = 'KB5070010'
$url = 'http://mirror.internal/updates/windows10.0-kb5070010-x64.cab'
$want = 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB'
$file = 'C:\k\downloads\windows10.0-kb5070010-x64.cab'
# Windows PowerShell 5.1's Invoke-WebRequest goes through the proxy it is
# given (-Proxy), never through HTTP_PROXY; a failed download names its URL
# and how it went, so a site reachable only through a proxy says so.
$via = 'without a proxy (none is set: where the guests reach it only through one, set proxy.https and proxy.http)'
try {
  Invoke-WebRequest -UseBasicParsing -Uri $url -OutFile $file
} catch {
  throw ('downloading ' + $url + ' ' + $via + ' failed: ' + $_.Exception.Message)
}
$got = (Get-FileHash -Algorithm SHA256 -LiteralPath $file).Hash
if ($got -ne $want) {
  Remove-Item -LiteralPath $file -Force
  throw ('checksum mismatch for ' + $kb + ' from ' + $url + ': expected ' + $want + ', got ' + $got)
}
$out = dism.exe /Online /Add-Package ('/PackagePath:' + $file) /Quiet /NoRestart
$code = $LASTEXITCODE
Remove-Item -LiteralPath $file -Force
if ($code -eq 0 -or $code -eq 2359302) {
  Write-Output ($kb + ' installed (exit code ' + $code + ')')
} elseif ($code -eq 3010) {
  Write-Output ($kb + ' installed, restart required (exit code ' + $code + ')')
  Write-Output 'BOOTSTRAP-REBOOT-REQUESTED'
  Restart-Computer -Force
} elseif ($code -eq 1641) {
  Write-Output ($kb + ' installed, restart initiated (exit code ' + $code + ')')
  Write-Output 'BOOTSTRAP-REBOOT-REQUESTED'
} else {
  $log = ''
  if (Test-Path -LiteralPath 'C:\Windows\Logs\CBS\CBS.log') {
    $log = (Get-Content -LiteralPath 'C:\Windows\Logs\CBS\CBS.log' | Select-Object -Last 8) -join "`r`n"
  }
  throw ('update ' + $kb + ' failed: exit code ' + $code + ' (0x' + ('{0:X8}' -f $code) + ')' + "`r`n" + ($out -join "`r`n") + "`r`nCBS.log:`r`n" + $log)
}

########## windows-update-KB5070011
# step: windows-update-KB5070011
$ErrorActionPreference = 'Stop'
# Download one update package, verify its SHA-256, install it and restart
# when it needs one. A .cab goes through DISM /Online /Add-Package in this
# session. A .msu goes through wusa.exe in a scheduled task as SYSTEM: wusa
# run from a WinRM (or SSH) session installs nothing and exits with 5
# ERROR_ACCESS_DENIED (KB2773898), while DISM takes a .msu on a running
# system only from Windows 11 21H2 (build 22000) on, not on Server 2019 and
# 2022. This step waits for the task's result file with a
# FileSystemWatcher. wusa.exe is a GUI-subsystem program: `& wusa.exe`
# returns at once and leaves $LASTEXITCODE as it was, so the task waits for
# it with Start-Process -Wait and takes -PassThru's ExitCode. Whether the
# package is really installed is read back afterwards (Get-HotFix, the
# windows-updates-installed step). Every value is a single-quoted literal
# (psquote).
$kb = 'KB5070011'
$url = 'http://mirror.internal/updates/windows10.0-kb5070011-x64.msu'
$want = 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB'
$file = 'C:\k\downloads\windows10.0-kb5070011-x64.msu'
# Windows PowerShell 5.1's Invoke-WebRequest goes through the proxy it is
# given (-Proxy), never through HTTP_PROXY; a failed download names its URL
# and how it went, so a site reachable only through a proxy says so.
$via = 'without a proxy (none is set: where the guests reach it only through one, set proxy.https and proxy.http)'
try {
  Invoke-WebRequest -UseBasicParsing -Uri $url -OutFile $file
} catch {
  throw ('downloading ' + $url + ' ' + $via + ' failed: ' + $_.Exception.Message)
}
$got = (Get-FileHash -Algorithm SHA256 -LiteralPath $file).Hash
if ($got -ne $want) {
  Remove-Item -LiteralPath $file -Force
  throw ('checksum mismatch for ' + $kb + ' from ' + $url + ': expected ' + $want + ', got ' + $got)
}
$dir = 'C:\k\windows-update-wusa'
$task = 'terraform-provider-windows-wusa'
$script = $dir + '\wusa.ps1'
$result = $dir + '\result.txt'
New-Item -ItemType Directory -Force -Path $dir | Out-Null
# The task writes wusa's exit code beside the result, then renames it: the
# rename is the event this step waits for, with the code already written.
$wusa = @'
$installer = Start-Process -FilePath 'wusa.exe' -ArgumentList @('C:\k\downloads\windows10.0-kb5070011-x64.msu', '/quiet', '/norestart') -Wait -PassThru
Set-Content -LiteralPath 'C:\k\windows-update-wusa\result.partial' -Value $installer.ExitCode
Move-Item -LiteralPath 'C:\k\windows-update-wusa\result.partial' -Destination 'C:\k\windows-update-wusa\result.txt' -Force
'@
Set-Content -LiteralPath $script -Value $wusa
if (Test-Path -LiteralPath $result) { Remove-Item -LiteralPath $result -Force }
$watcher = [System.IO.FileSystemWatcher]::new($dir, 'result.txt')
$scheduler = New-Object -ComObject 'Schedule.Service'
$scheduler.Connect()
$folder = $scheduler.GetFolder('\')
$definition = $scheduler.NewTask(0)
$action = $definition.Actions.Create(0)
$action.Path = 'powershell.exe'
$action.Arguments = '-NoProfile -NonInteractive -ExecutionPolicy Bypass -File "' + $script + '"'
$definition.Principal.UserId = 'SYSTEM'
$definition.Principal.LogonType = 5
$definition.Principal.RunLevel = 1
$registered = $folder.RegisterTaskDefinition($task, $definition, 6, 'SYSTEM', $null, 5)
$registered.Run($null) | Out-Null
# WaitForChanged sees only what happens while it waits: a task that ended
# before it was called left its result already there.
while (-not (Test-Path -LiteralPath $result)) {
  $change = $watcher.WaitForChanged('Renamed', 60000)
  if (-not $change.TimedOut) { break }
  # A minute without a result: the task must still be running.
  if ($folder.GetTask($task).State -ne 4 -and -not (Test-Path -LiteralPath $result)) {
    $last = $folder.GetTask($task).LastTaskResult
    $folder.DeleteTask($task, 0)
    throw ('the wusa.exe task for ' + $kb + ' ended without a result (last result 0x' + ('{0:X8}' -f $last) + ')')
  }
}
$watcher.Dispose()
$folder.DeleteTask($task, 0)
$code = [int](Get-Content -LiteralPath $result | Select-Object -First 1)
Remove-Item -LiteralPath $result -Force
Remove-Item -LiteralPath $script -Force
$out = @('wusa.exe ' + $file + ' /quiet /norestart (in the scheduled task ' + $task + ' as SYSTEM)')
Remove-Item -LiteralPath $file -Force
if ($code -eq 0 -or $code -eq 2359302) {
  Write-Output ($kb + ' installed (exit code ' + $code + ')')
} elseif ($code -eq 3010) {
  Write-Output ($kb + ' installed, restart required (exit code ' + $code + ')')
  Write-Output 'BOOTSTRAP-REBOOT-REQUESTED'
  Restart-Computer -Force
} elseif ($code -eq 1641) {
  Write-Output ($kb + ' installed, restart initiated (exit code ' + $code + ')')
  Write-Output 'BOOTSTRAP-REBOOT-REQUESTED'
} else {
  $log = ''
  if (Test-Path -LiteralPath 'C:\Windows\Logs\CBS\CBS.log') {
    $log = (Get-Content -LiteralPath 'C:\Windows\Logs\CBS\CBS.log' | Select-Object -Last 8) -join "`r`n"
  }
  throw ('update ' + $kb + ' failed: exit code ' + $code + ' (0x' + ('{0:X8}' -f $code) + ')' + "`r`n" + ($out -join "`r`n") + "`r`nCBS.log:`r`n" + $log)
}

########## windows-updates-installed
# step: windows-updates-installed
$ErrorActionPreference = 'Stop'
# Read back the updates Windows has installed, after every update package's
# step and the restarts they asked for: an installer's exit code says what
# it reported, not what the servicing stack holds (wusa.exe, a GUI program,
# returns at once from `&` without one). Get-HotFix lists the installed
# updates (Win32_QuickFixEngineering); each line "installed-update <KB>" is
# what the image's installed_updates records, and a package listed in
# windows_updates that is not installed fails the build naming it.
$want = @('KB5070010', 'KB5070011')
$installed = @(Get-HotFix | ForEach-Object { $_.HotFixID })
foreach ($kb in $installed) { Write-Output ('installed-update ' + $kb) }
$missing = @($want | Where-Object { $installed -notcontains $_ })
if ($missing.Count -gt 0) {
  throw ('update ' + ($missing -join ', ') + ' is not installed: its installer reported success, but Get-HotFix does not list it; see ' + 'C:\Windows\Logs\CBS\CBS.log')
}

########## windows-update-wsus
# step: windows-update-wsus
$ErrorActionPreference = 'Stop'
# Point the Windows Update Agent at the site's WSUS: the WUServer and
# WUStatusServer policy values and UseWUServer = 1
# (https://learn.microsoft.com/en-us/windows/deployment/update/waas-wu-settings#specify-intranet-microsoft-update-service-location).
# reg.exe add creates the keys and overwrites the values (/f): rerunnable.
$server = 'http://wsus.internal:8530'
foreach ($name in @('WUServer', 'WUStatusServer')) {
  $out = reg.exe add 'HKLM\SOFTWARE\Policies\Microsoft\Windows\WindowsUpdate' /v $name /t REG_SZ /d $server /f 2>&1
  if ($LASTEXITCODE -ne 0) { throw ('reg add ' + $name + ' failed (exit code ' + $LASTEXITCODE + '): ' + ($out -join ' ')) }
}
$out = reg.exe add 'HKLM\SOFTWARE\Policies\Microsoft\Windows\WindowsUpdate\AU' /v UseWUServer /t REG_DWORD /d 1 /f 2>&1
if ($LASTEXITCODE -ne 0) { throw ('reg add UseWUServer failed (exit code ' + $LASTEXITCODE + '): ' + ($out -join ' ')) }
Write-Output ('Windows Update uses the WSUS ' + $server)

########## windows-update-online
# step: windows-update-online
$ErrorActionPreference = 'Stop'
# Search, download and install updates with the Windows Update Agent's COM
# API (Microsoft.Update.Session), as ansible.windows' win_updates and Packer's
# windows-update provisioner do. The agent refuses its downloader and
# installer to a remote logon (E_ACCESSDENIED), so the agent's part runs in a
# scheduled task as LocalSystem; this step waits for its result file with a
# FileSystemWatcher. The task searches again after each install until nothing
# applies or a restart is needed; then this step restarts the computer and the
# build runs it again. Values are single-quoted literals (psquote).
$dir = 'C:\k\windows-update'
$task = 'terraform-provider-windows-update'
$script = $dir + '\search-install.ps1'
$result = $dir + '\result.txt'
New-Item -ItemType Directory -Force -Path $dir | Out-Null
$agent = @'
$ErrorActionPreference = 'Stop'
$out = @()
try {
  $session = New-Object -ComObject 'Microsoft.Update.Session'
  $session.ClientApplicationID = 'terraform-provider-windows'
  $include = @()
  $exclude = @('KB5070014')
  $round = 0
  while ($true) {
    $round++
    if ($round -gt 10) { throw 'updates still apply after 10 rounds of search and install' }
    $searcher = $session.CreateUpdateSearcher()
    $search = $searcher.Search('IsInstalled=0 and IsHidden=0 and Type=''Software'' and CategoryIDs contains ''0fa1201d-4330-4fa8-8ae9-b877473b6441'' or IsInstalled=0 and IsHidden=0 and Type=''Software'' and CategoryIDs contains ''e6cf1350-c01b-414d-a61f-263d14d133b4''')
    if ($search.ResultCode -ne 2) { throw ('the search ended with ResultCode ' + $search.ResultCode) }
    $selected = New-Object -ComObject 'Microsoft.Update.UpdateColl'
    for ($i = 0; $i -lt $search.Updates.Count; $i++) {
      $update = $search.Updates.Item($i)
      $kb = 'KB' + $update.KBArticleIDs.Item(0)
      if ($include.Count -gt 0 -and $include -notcontains $kb) { $out += ('WUA-SKIPPED ' + $kb + ' include_kbs'); continue }
      if ($exclude -contains $kb) { $out += ('WUA-SKIPPED ' + $kb + ' exclude_kbs'); continue }
      if (-not $update.EulaAccepted) { $update.AcceptEula() }
      $selected.Add($update) | Out-Null
    }
    if ($selected.Count -eq 0) { break }
    $downloader = $session.CreateUpdateDownloader()
    $downloader.Updates = $selected
    $download = $downloader.Download()
    $failed = @()
    for ($i = 0; $i -lt $selected.Count; $i++) {
      $r = $download.GetUpdateResult($i)
      if ($r.ResultCode -ne 2) { $failed += ('KB' + $selected.Item($i).KBArticleIDs.Item(0) + ' download ResultCode ' + $r.ResultCode + ' HRESULT 0x' + ('{0:X8}' -f $r.HResult)) }
    }
    if ($failed.Count -gt 0) { throw ($failed -join '; ') }
    $installer = $session.CreateUpdateInstaller()
    $installer.Updates = $selected
    $install = $installer.Install()
    for ($i = 0; $i -lt $selected.Count; $i++) {
      $update = $selected.Item($i)
      $r = $install.GetUpdateResult($i)
      $kb = 'KB' + $update.KBArticleIDs.Item(0)
      if ($r.ResultCode -eq 2) {
        $out += ('WUA-INSTALLED ' + $kb + ' ' + $update.MaxDownloadSize + ' ' + $update.Title)
      } else {
        $failed += ($kb + ' install ResultCode ' + $r.ResultCode + ' HRESULT 0x' + ('{0:X8}' -f $r.HResult))
      }
    }
    if ($failed.Count -gt 0) { throw ($failed -join '; ') }
    if ($install.RebootRequired) { $out += 'WUA-REBOOT'; break }
  }
  $out += 'WUA-DONE'
} catch {
  $out += ('WUA-ERROR ' + $_.Exception.Message)
}
# Written beside the result, then renamed: the rename is the event the step
# waits for, with every line already written.
Set-Content -LiteralPath 'C:\k\windows-update\result.partial' -Value $out
Move-Item -LiteralPath 'C:\k\windows-update\result.partial' -Destination 'C:\k\windows-update\result.txt' -Force
'@
Set-Content -LiteralPath $script -Value $agent
if (Test-Path -LiteralPath $result) { Remove-Item -LiteralPath $result -Force }
# The watcher sees what happens after it starts: it starts before the task.
$watcher = [System.IO.FileSystemWatcher]::new($dir, 'result.txt')
$scheduler = New-Object -ComObject 'Schedule.Service'
$scheduler.Connect()
$folder = $scheduler.GetFolder('\')
$definition = $scheduler.NewTask(0)
$action = $definition.Actions.Create(0)
$action.Path = 'powershell.exe'
$action.Arguments = '-NoProfile -NonInteractive -ExecutionPolicy Bypass -File "' + $script + '"'
$definition.Principal.UserId = 'SYSTEM'
$definition.Principal.LogonType = 5
$definition.Principal.RunLevel = 1
$registered = $folder.RegisterTaskDefinition($task, $definition, 6, 'SYSTEM', $null, 5)
$registered.Run($null) | Out-Null
# WaitForChanged sees only what happens while it waits: a task that ended
# before it was called left its result already there.
while (-not (Test-Path -LiteralPath $result)) {
  $change = $watcher.WaitForChanged('Renamed', 60000)
  if (-not $change.TimedOut) { break }
  # A minute without a result: the task must still be running.
  if ($folder.GetTask($task).State -ne 4 -and -not (Test-Path -LiteralPath $result)) {
    $last = $folder.GetTask($task).LastTaskResult
    $folder.DeleteTask($task, 0)
    throw ('the Windows Update task ended without a result (last result 0x' + ('{0:X8}' -f $last) + ')')
  }
}
$watcher.Dispose()
$folder.DeleteTask($task, 0)
$lines = @(Get-Content -LiteralPath $result)
Remove-Item -LiteralPath $result -Force
Remove-Item -LiteralPath $script -Force
$errors = @{
  '0x80070005' = 'E_ACCESSDENIED: access is denied (the Windows Update Agent refuses its downloader and installer to a remote logon)'
  '0x80072EE2' = 'ERROR_WINHTTP_TIMEOUT: the update server did not answer in time'
  '0x80072EFD' = 'ERROR_WINHTTP_CANNOT_CONNECT: the update server cannot be reached; check the URL, port and firewall, and at a site that lets only its proxy out set proxy (the agent goes through WinHTTP''s proxy)'
  '0x80096010' = 'TRUST_E_BAD_DIGEST: the digital signature of the package did not verify'
  '0x800F0823' = 'CBS_E_NEW_SERVICING_STACK_REQUIRED: the update needs a newer servicing stack'
  '0x80240016' = 'WU_E_INSTALL_NOT_ALLOWED: another installation is in progress or a restart is pending'
  '0x80240017' = 'WU_E_NOT_APPLICABLE: the update is not applicable to this computer'
  '0x8024001E' = 'WU_E_SERVICE_STOP: the service or system was being shut down'
  '0x80240024' = 'WU_E_NO_UPDATE: there are no updates'
  '0x80240032' = 'WU_E_INVALID_CRITERIA: the search criteria string was invalid'
  '0x80240034' = 'WU_E_DOWNLOAD_FAILED: the update failed to download'
  '0x80244019' = 'WU_E_PT_HTTP_STATUS_NOT_FOUND: the server answered HTTP 404; is wsus_server a WSUS server?'
  '0x8024401F' = 'WU_E_PT_HTTP_STATUS_SERVER_ERROR: the update server answered HTTP 500'
  '0x80244021' = 'WU_E_PT_HTTP_STATUS_BAD_GATEWAY: the proxy answered HTTP 502 (it could not reach the update server)'
  '0x80244022' = 'WU_E_PT_HTTP_STATUS_SERVICE_UNAVAIL: the update server answered HTTP 503'
  '0x8024402C' = 'WU_E_PT_WINHTTP_NAME_NOT_RESOLVED: the proxy or update server name cannot be resolved; check the guest''s DNS, proxy and wsus_server'
}
foreach ($line in $lines) {
  if ($line.StartsWith('WUA-ERROR ')) {
    $message = $line.Substring(10)
    $meaning = ''
    if ($message -match '0x[0-9A-Fa-f]{8}') {
      $hr = '0x' + $Matches[0].Substring(2).ToUpper()
      if ($errors.ContainsKey($hr)) { $meaning = ' (' + $hr + ' ' + $errors[$hr] + ')' }
    }
    throw ('Windows Update failed: ' + $message + $meaning + "`r`n" + (($lines | Where-Object { $_.StartsWith('WUA-INSTALLED ') }) -join "`r`n"))
  }
}
$lines | Where-Object { $_ -ne 'WUA-REBOOT' -and $_ -ne 'WUA-DONE' } | ForEach-Object { Write-Output $_ }
if ($lines -contains 'WUA-REBOOT') {
  Write-Output 'updates installed, restart required'
  Write-Output 'BOOTSTRAP-REBOOT-REQUESTED'
  Restart-Computer -Force
} else {
  Write-Output 'no more updates apply'
}

########## containers-feature
# step: containers-feature
$ErrorActionPreference = 'Stop'
# Windows containers need the Containers feature; enabling it needs a restart.
if ((Get-WindowsFeature -Name 'Containers').Installed) {
  Write-Output 'Containers feature already installed'
} elseif ((Install-WindowsFeature -Name 'Containers').RestartNeeded -eq 'Yes') {
  Write-Output 'BOOTSTRAP-REBOOT-REQUESTED'
  Restart-Computer -Force
}

########## install-containerd
# step: install-containerd
$ErrorActionPreference = 'Stop'
# Download the artifact, verify its SHA-256, and only then put it in place.
# Every value is a single-quoted literal (psquote): none is written into a
# comment, a double-quoted string or a bare word.
$name = 'containerd'
$url = 'https://github.com/containerd/containerd/releases/download/v2.2.7/containerd-2.2.7-windows-amd64.tar.gz'
$want = 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB'
$target = 'C:\k\downloads\containerd-2.2.7-windows-amd64.tar.gz'
if ((Test-Path -LiteralPath $target) -and ((Get-FileHash -Algorithm SHA256 -LiteralPath $target).Hash -eq $want)) {
  Write-Output ($name + ' already installed: ' + $target)
} else {
  $download = 'C:\k\downloads\containerd-2.2.7-windows-amd64.tar.gz.download'
  # Windows PowerShell 5.1's Invoke-WebRequest goes through the proxy it is
# given (-Proxy), never through HTTP_PROXY; a failed download names its URL
# and how it went, so a site reachable only through a proxy says so.
$via = 'without a proxy (none is set: where the guests reach it only through one, set proxy.https and proxy.http)'
try {
  Invoke-WebRequest -UseBasicParsing -Uri $url -OutFile $download
} catch {
  throw ('downloading ' + $url + ' ' + $via + ' failed: ' + $_.Exception.Message)
}
  $got = (Get-FileHash -Algorithm SHA256 -LiteralPath $download).Hash
  if ($got -ne $want) {
    Remove-Item -LiteralPath $download -Force
    throw ('checksum mismatch for ' + $name + ' from ' + $url + ': expected ' + $want + ', got ' + $got)
  }
  Move-Item -LiteralPath $download -Destination $target -Force
  New-Item -ItemType Directory -Force -Path 'C:\Program Files\containerd' | Out-Null
  # tar.exe is a native program: PowerShell 5.1 does not stop when it fails.
  $out = tar.exe -xzf $target -C 'C:\Program Files\containerd'
  if ($LASTEXITCODE) { throw ('tar.exe could not unpack ' + $target + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
  Write-Output ($name + ' installed: ' + $target)
}

########## install-kubelet
# step: install-kubelet
$ErrorActionPreference = 'Stop'
# Download the artifact, verify its SHA-256, and only then put it in place.
# Every value is a single-quoted literal (psquote): none is written into a
# comment, a double-quoted string or a bare word.
$name = 'kubelet'
$url = 'https://dl.k8s.io/release/v1.36.3/bin/windows/amd64/kubelet.exe'
$want = 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB'
$target = 'C:\k\kubelet.exe'
if ((Test-Path -LiteralPath $target) -and ((Get-FileHash -Algorithm SHA256 -LiteralPath $target).Hash -eq $want)) {
  Write-Output ($name + ' already installed: ' + $target)
} else {
  $download = 'C:\k\kubelet.exe.download'
  # Windows PowerShell 5.1's Invoke-WebRequest goes through the proxy it is
# given (-Proxy), never through HTTP_PROXY; a failed download names its URL
# and how it went, so a site reachable only through a proxy says so.
$via = 'without a proxy (none is set: where the guests reach it only through one, set proxy.https and proxy.http)'
try {
  Invoke-WebRequest -UseBasicParsing -Uri $url -OutFile $download
} catch {
  throw ('downloading ' + $url + ' ' + $via + ' failed: ' + $_.Exception.Message)
}
  $got = (Get-FileHash -Algorithm SHA256 -LiteralPath $download).Hash
  if ($got -ne $want) {
    Remove-Item -LiteralPath $download -Force
    throw ('checksum mismatch for ' + $name + ' from ' + $url + ': expected ' + $want + ', got ' + $got)
  }
  Move-Item -LiteralPath $download -Destination $target -Force
  Write-Output ($name + ' installed: ' + $target)
}

########## install-kube-proxy
# step: install-kube-proxy
$ErrorActionPreference = 'Stop'
# Download the artifact, verify its SHA-256, and only then put it in place.
# Every value is a single-quoted literal (psquote): none is written into a
# comment, a double-quoted string or a bare word.
$name = 'kube-proxy'
$url = 'http://artifacts.internal:8080/k8s/v1.36.3/bin/windows/amd64/kube-proxy.exe'
$want = 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB'
$target = 'C:\k\kube-proxy.exe'
if ((Test-Path -LiteralPath $target) -and ((Get-FileHash -Algorithm SHA256 -LiteralPath $target).Hash -eq $want)) {
  Write-Output ($name + ' already installed: ' + $target)
} else {
  $download = 'C:\k\kube-proxy.exe.download'
  # Windows PowerShell 5.1's Invoke-WebRequest goes through the proxy it is
# given (-Proxy), never through HTTP_PROXY; a failed download names its URL
# and how it went, so a site reachable only through a proxy says so.
$via = 'without a proxy (none is set: where the guests reach it only through one, set proxy.https and proxy.http)'
try {
  Invoke-WebRequest -UseBasicParsing -Uri $url -OutFile $download
} catch {
  throw ('downloading ' + $url + ' ' + $via + ' failed: ' + $_.Exception.Message)
}
  $got = (Get-FileHash -Algorithm SHA256 -LiteralPath $download).Hash
  if ($got -ne $want) {
    Remove-Item -LiteralPath $download -Force
    throw ('checksum mismatch for ' + $name + ' from ' + $url + ': expected ' + $want + ', got ' + $got)
  }
  Move-Item -LiteralPath $download -Destination $target -Force
  Write-Output ($name + ' installed: ' + $target)
}

########## install-kube-log-runner
# step: install-kube-log-runner
$ErrorActionPreference = 'Stop'
# Download the artifact, verify its SHA-256, and only then put it in place.
# Every value is a single-quoted literal (psquote): none is written into a
# comment, a double-quoted string or a bare word.
$name = 'kube-log-runner'
$url = 'https://dl.k8s.io/release/v1.36.3/bin/windows/amd64/kube-log-runner.exe'
$want = 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB'
$target = 'C:\k\kube-log-runner.exe'
if ((Test-Path -LiteralPath $target) -and ((Get-FileHash -Algorithm SHA256 -LiteralPath $target).Hash -eq $want)) {
  Write-Output ($name + ' already installed: ' + $target)
} else {
  $download = 'C:\k\kube-log-runner.exe.download'
  # Windows PowerShell 5.1's Invoke-WebRequest goes through the proxy it is
# given (-Proxy), never through HTTP_PROXY; a failed download names its URL
# and how it went, so a site reachable only through a proxy says so.
$via = 'without a proxy (none is set: where the guests reach it only through one, set proxy.https and proxy.http)'
try {
  Invoke-WebRequest -UseBasicParsing -Uri $url -OutFile $download
} catch {
  throw ('downloading ' + $url + ' ' + $via + ' failed: ' + $_.Exception.Message)
}
  $got = (Get-FileHash -Algorithm SHA256 -LiteralPath $download).Hash
  if ($got -ne $want) {
    Remove-Item -LiteralPath $download -Force
    throw ('checksum mismatch for ' + $name + ' from ' + $url + ': expected ' + $want + ', got ' + $got)
  }
  Move-Item -LiteralPath $download -Destination $target -Force
  Write-Output ($name + ' installed: ' + $target)
}

########## install-cni-plugins
# step: install-cni-plugins
$ErrorActionPreference = 'Stop'
# Download the artifact, verify its SHA-256, and only then put it in place.
# Every value is a single-quoted literal (psquote): none is written into a
# comment, a double-quoted string or a bare word.
$name = 'cni-plugins'
$url = 'https://example.com/cni-plugins-windows-amd64-v1.9.1.tgz'
$want = 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB'
$target = 'C:\k\downloads\cni-plugins-windows-amd64-v1.9.1.tgz'
if ((Test-Path -LiteralPath $target) -and ((Get-FileHash -Algorithm SHA256 -LiteralPath $target).Hash -eq $want)) {
  Write-Output ($name + ' already installed: ' + $target)
} else {
  $download = 'C:\k\downloads\cni-plugins-windows-amd64-v1.9.1.tgz.download'
  # Windows PowerShell 5.1's Invoke-WebRequest goes through the proxy it is
# given (-Proxy), never through HTTP_PROXY; a failed download names its URL
# and how it went, so a site reachable only through a proxy says so.
$via = 'without a proxy (none is set: where the guests reach it only through one, set proxy.https and proxy.http)'
try {
  Invoke-WebRequest -UseBasicParsing -Uri $url -OutFile $download
} catch {
  throw ('downloading ' + $url + ' ' + $via + ' failed: ' + $_.Exception.Message)
}
  $got = (Get-FileHash -Algorithm SHA256 -LiteralPath $download).Hash
  if ($got -ne $want) {
    Remove-Item -LiteralPath $download -Force
    throw ('checksum mismatch for ' + $name + ' from ' + $url + ': expected ' + $want + ', got ' + $got)
  }
  Move-Item -LiteralPath $download -Destination $target -Force
  New-Item -ItemType Directory -Force -Path 'C:\opt\cni\bin' | Out-Null
  # tar.exe is a native program: PowerShell 5.1 does not stop when it fails.
  $out = tar.exe -xzf $target -C 'C:\opt\cni\bin'
  if ($LASTEXITCODE) { throw ('tar.exe could not unpack ' + $target + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
  Write-Output ($name + ' installed: ' + $target)
}

########## install-flanneld
# step: install-flanneld
$ErrorActionPreference = 'Stop'
# Download the artifact, verify its SHA-256, and only then put it in place.
# Every value is a single-quoted literal (psquote): none is written into a
# comment, a double-quoted string or a bare word.
$name = 'flanneld'
$url = 'https://github.com/flannel-io/flannel/releases/download/v0.28.9/flanneld.exe'
$want = 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB'
$target = 'C:\k\flanneld.exe'
if ((Test-Path -LiteralPath $target) -and ((Get-FileHash -Algorithm SHA256 -LiteralPath $target).Hash -eq $want)) {
  Write-Output ($name + ' already installed: ' + $target)
} else {
  $download = 'C:\k\flanneld.exe.download'
  # Windows PowerShell 5.1's Invoke-WebRequest goes through the proxy it is
# given (-Proxy), never through HTTP_PROXY; a failed download names its URL
# and how it went, so a site reachable only through a proxy says so.
$via = 'without a proxy (none is set: where the guests reach it only through one, set proxy.https and proxy.http)'
try {
  Invoke-WebRequest -UseBasicParsing -Uri $url -OutFile $download
} catch {
  throw ('downloading ' + $url + ' ' + $via + ' failed: ' + $_.Exception.Message)
}
  $got = (Get-FileHash -Algorithm SHA256 -LiteralPath $download).Hash
  if ($got -ne $want) {
    Remove-Item -LiteralPath $download -Force
    throw ('checksum mismatch for ' + $name + ' from ' + $url + ': expected ' + $want + ', got ' + $got)
  }
  Move-Item -LiteralPath $download -Destination $target -Force
  Write-Output ($name + ' installed: ' + $target)
}

########## install-flannel-cni-plugin
# step: install-flannel-cni-plugin
$ErrorActionPreference = 'Stop'
# Download the artifact, verify its SHA-256, and only then put it in place.
# Every value is a single-quoted literal (psquote): none is written into a
# comment, a double-quoted string or a bare word.
$name = 'flannel-cni-plugin'
$url = 'https://github.com/flannel-io/cni-plugin/releases/download/v1.9.1-flannel1/cni-plugin-flannel-windows-amd64-v1.9.1-flannel1.tgz'
$want = 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB'
$target = 'C:\k\downloads\cni-plugin-flannel-windows-amd64-v1.9.1-flannel1.tgz'
if ((Test-Path -LiteralPath $target) -and ((Get-FileHash -Algorithm SHA256 -LiteralPath $target).Hash -eq $want)) {
  Write-Output ($name + ' already installed: ' + $target)
} else {
  $download = 'C:\k\downloads\cni-plugin-flannel-windows-amd64-v1.9.1-flannel1.tgz.download'
  # Windows PowerShell 5.1's Invoke-WebRequest goes through the proxy it is
# given (-Proxy), never through HTTP_PROXY; a failed download names its URL
# and how it went, so a site reachable only through a proxy says so.
$via = 'without a proxy (none is set: where the guests reach it only through one, set proxy.https and proxy.http)'
try {
  Invoke-WebRequest -UseBasicParsing -Uri $url -OutFile $download
} catch {
  throw ('downloading ' + $url + ' ' + $via + ' failed: ' + $_.Exception.Message)
}
  $got = (Get-FileHash -Algorithm SHA256 -LiteralPath $download).Hash
  if ($got -ne $want) {
    Remove-Item -LiteralPath $download -Force
    throw ('checksum mismatch for ' + $name + ' from ' + $url + ': expected ' + $want + ', got ' + $got)
  }
  Move-Item -LiteralPath $download -Destination $target -Force
  New-Item -ItemType Directory -Force -Path 'C:\opt\cni\bin' | Out-Null
  # tar.exe is a native program: PowerShell 5.1 does not stop when it fails.
  $out = tar.exe -xzf $target -C 'C:\opt\cni\bin'
  if ($LASTEXITCODE) { throw ('tar.exe could not unpack ' + $target + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
  Move-Item -LiteralPath 'C:\opt\cni\bin\flannel-amd64.exe' -Destination 'C:\opt\cni\bin\flannel.exe' -Force
  Write-Output ($name + ' installed: ' + $target)
}

########## install-wins
# step: install-wins
$ErrorActionPreference = 'Stop'
# Download the artifact, verify its SHA-256, and only then put it in place.
# Every value is a single-quoted literal (psquote): none is written into a
# comment, a double-quoted string or a bare word.
$name = 'wins'
$url = 'https://example.com/wins.exe'
$want = 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB'
$target = 'C:\k\wins.exe'
if ((Test-Path -LiteralPath $target) -and ((Get-FileHash -Algorithm SHA256 -LiteralPath $target).Hash -eq $want)) {
  Write-Output ($name + ' already installed: ' + $target)
} else {
  $download = 'C:\k\wins.exe.download'
  # Windows PowerShell 5.1's Invoke-WebRequest goes through the proxy it is
# given (-Proxy), never through HTTP_PROXY; a failed download names its URL
# and how it went, so a site reachable only through a proxy says so.
$via = 'without a proxy (none is set: where the guests reach it only through one, set proxy.https and proxy.http)'
try {
  Invoke-WebRequest -UseBasicParsing -Uri $url -OutFile $download
} catch {
  throw ('downloading ' + $url + ' ' + $via + ' failed: ' + $_.Exception.Message)
}
  $got = (Get-FileHash -Algorithm SHA256 -LiteralPath $download).Hash
  if ($got -ne $want) {
    Remove-Item -LiteralPath $download -Force
    throw ('checksum mismatch for ' + $name + ' from ' + $url + ': expected ' + $want + ', got ' + $got)
  }
  Move-Item -LiteralPath $download -Destination $target -Force
  Write-Output ($name + ' installed: ' + $target)
}

########## containerd-service
# step: containerd-service
$ErrorActionPreference = 'Stop'
# containerd as a Windows service, with the pause image and CNI directories:
# containerd registers itself (--register-service: automatic start, its own
# recovery actions, and the --config it was given kept in the service's
# command line; containerd cmd/containerd/command/service_windows.go). A
# native program's stderr is left alone: redirected under
# $ErrorActionPreference = 'Stop', Windows PowerShell 5.1 turns its first
# line into a terminating error before the exit code can be read.
Set-Content -Path 'C:\Program Files\containerd\config.toml' -Value 'version = 3
[plugins.''io.containerd.cri.v1.images''.pinned_images]
  sandbox = ''registry.k8s.io/pause:3.10.2@sha256:f548e0e8e3dc1896ca956272154dde3314e8cc4fde0a57577ee9fa1c63f5baf4''
[plugins.''io.containerd.cri.v1.runtime''.cni]
  bin_dirs = [''C:\opt\cni\bin'']
  conf_dir = ''C:\etc\cni\net.d''
' -NoNewline
if (-not (Get-Service -Name 'containerd' -ErrorAction SilentlyContinue)) {
  $out = & 'C:\Program Files\containerd\bin\containerd.exe' --register-service --config 'C:\Program Files\containerd\config.toml'
  if ($LASTEXITCODE) { throw ('containerd --register-service failed with exit code ' + $LASTEXITCODE + ': ' + $out) }
}
Start-Service -Name 'containerd'
Write-Output ('containerd ' + (Get-Service -Name 'containerd').Status)

########## prepull-images
# step: prepull-images
$ErrorActionPreference = 'Stop'
# Pull the images every node needs (the pause image, the HostProcess base
# image of the node agents), so the first pods start without waiting and
# air-gapped sites need only a registry mirror at build time. With mirrors,
# ctr reads their hosts.toml (--hosts-dir) and takes the mirror's
# credential on its command line (--user), never from a file.
$out = & 'C:\Program Files\containerd\bin\ctr.exe' -n k8s.io images pull 'mcr.microsoft.com/oss/kubernetes/windows-host-process-containers-base-image:v1.0.0'
if ($LASTEXITCODE) { throw ('ctr.exe could not pull ' + 'mcr.microsoft.com/oss/kubernetes/windows-host-process-containers-base-image:v1.0.0' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
Write-Output 'images pulled'

########## vmware-tools
# step: vmware-tools
$ErrorActionPreference = 'Stop'
# exclude-nics set empty in tools.conf's [guestinfo] section makes VMware
# Tools report every NIC's address, so the guest IP stays visible in vSphere
# once container networking adds adapters. The rest of the file is kept
# (settings an administrator or an earlier build put there), and a file that
# already says so is left alone: the step is rerunnable.
#
# VMware Tools is not restarted: vmtoolsd reads tools.conf again every
# 5 seconds (open-vm-tools services/vmtoolsd/mainLoop.c, ToolsCoreConfFileCb)
# and its guestinfo plugin applies the reload (guestInfoServer.c,
# GuestInfoServerConfReload). Restarting the VMTools service from here would
# end the guest operation running this very script: vmtoolsd keeps the exit
# codes of the programs it started in its own memory (vixTools.c,
# startedProcessList), and guest operations fail while it is stopped.
$path = 'C:\ProgramData\VMware\VMware Tools\tools.conf'
New-Item -ItemType Directory -Force -Path 'C:\ProgramData\VMware\VMware Tools' | Out-Null
$lines = @()
if (Test-Path -LiteralPath $path) {
  $lines = @(Get-Content -LiteralPath $path)
}
$out = @()
$section = ''
$done = $false
foreach ($line in $lines) {
  $t = $line.Trim()
  if ($t -match '^\[(.+)\]$') {
    if ($section -eq 'guestinfo' -and -not $done) {
      $out += 'exclude-nics='
      $done = $true
    }
    $section = $Matches[1].Trim().ToLowerInvariant()
    $out += $line
    continue
  }
  if ($section -eq 'guestinfo' -and $t -match '^exclude-nics\s*=') {
    if (-not $done) {
      $out += 'exclude-nics='
      $done = $true
    }
    continue
  }
  $out += $line
}
if (-not $done) {
  if ($section -ne 'guestinfo') {
    $out += '[guestinfo]'
  }
  $out += 'exclude-nics='
}
if (($lines -join "`r`n") -ceq ($out -join "`r`n")) {
  Write-Output 'tools.conf already reports every NIC'
} else {
  Set-Content -LiteralPath $path -Value $out
  Write-Output 'tools.conf written (VMware Tools reads it again within seconds)'
}

########## firewall
# step: firewall
$ErrorActionPreference = 'Stop'
# The kubelet's port, TCP 10250, for the API server (logs, exec, port-forward,
# metrics). An image does not know the cluster its nodes join, so the rule is
# made disabled: no address reaches the kubelet until a join scopes the rule to
# that cluster's addresses and enables it (kubelet-firewall).
if (-not (Get-NetFirewallRule -Name 'kubelet-10250' -ErrorAction SilentlyContinue)) {
  New-NetFirewallRule -Name 'kubelet-10250' -DisplayName 'kubelet (TCP 10250)' -Direction Inbound -Protocol TCP -LocalPort 10250 -Action Allow -Enabled False | Out-Null
}
Write-Output 'firewall rule present'

########## openssh
# step: openssh
$ErrorActionPreference = 'Stop'
# OpenSSH server with the operator's key for the Administrators group.
Add-WindowsCapability -Online -Name 'OpenSSH.Server~~~~0.0.1.0' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\ProgramData\ssh' | Out-Null
Set-Content -Path 'C:\ProgramData\ssh\administrators_authorized_keys' -Value 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOperatorKey operator@example.com'
$out = icacls.exe 'C:\ProgramData\ssh\administrators_authorized_keys' /inheritance:r /grant 'Administrators:F' /grant 'SYSTEM:F'
if ($LASTEXITCODE) { throw ('icacls.exe could not restrict administrators_authorized_keys (exit code ' + $LASTEXITCODE + '): ' + $out) }
if (Get-Service -Name 'sshd' -ErrorAction SilentlyContinue) {
  Set-Service -Name 'sshd' -StartupType Automatic
  Start-Service -Name 'sshd'
}
Write-Output 'OpenSSH configured'

########## verify
# step: verify
$ErrorActionPreference = 'Stop'
# Check the finished image before sysprep: every artifact in place with the
# checksum it was verified with, and containerd running.
if ((Get-FileHash -Algorithm SHA256 -LiteralPath 'C:\k\downloads\containerd-2.2.7-windows-amd64.tar.gz').Hash -ne 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB') { throw ('verify: containerd at C:\k\downloads\containerd-2.2.7-windows-amd64.tar.gz does not have the expected checksum') }
if ((Get-FileHash -Algorithm SHA256 -LiteralPath 'C:\k\kubelet.exe').Hash -ne 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB') { throw ('verify: kubelet at C:\k\kubelet.exe does not have the expected checksum') }
if ((Get-FileHash -Algorithm SHA256 -LiteralPath 'C:\k\kube-proxy.exe').Hash -ne 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB') { throw ('verify: kube-proxy at C:\k\kube-proxy.exe does not have the expected checksum') }
if ((Get-FileHash -Algorithm SHA256 -LiteralPath 'C:\k\kube-log-runner.exe').Hash -ne 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB') { throw ('verify: kube-log-runner at C:\k\kube-log-runner.exe does not have the expected checksum') }
if ((Get-FileHash -Algorithm SHA256 -LiteralPath 'C:\k\downloads\cni-plugins-windows-amd64-v1.9.1.tgz').Hash -ne 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB') { throw ('verify: cni-plugins at C:\k\downloads\cni-plugins-windows-amd64-v1.9.1.tgz does not have the expected checksum') }
if ((Get-FileHash -Algorithm SHA256 -LiteralPath 'C:\k\flanneld.exe').Hash -ne 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB') { throw ('verify: flanneld at C:\k\flanneld.exe does not have the expected checksum') }
if ((Get-FileHash -Algorithm SHA256 -LiteralPath 'C:\k\downloads\cni-plugin-flannel-windows-amd64-v1.9.1-flannel1.tgz').Hash -ne 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB') { throw ('verify: flannel-cni-plugin at C:\k\downloads\cni-plugin-flannel-windows-amd64-v1.9.1-flannel1.tgz does not have the expected checksum') }
if (-not (Test-Path -Path 'C:\opt\cni\bin\flannel.exe' -PathType Leaf)) { throw ('verify: flannel-cni-plugin did not install C:\opt\cni\bin\flannel.exe (is flannel-amd64.exe in the archive?)') }
if ((Get-FileHash -Algorithm SHA256 -LiteralPath 'C:\k\wins.exe').Hash -ne 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB') { throw ('verify: wins at C:\k\wins.exe does not have the expected checksum') }
if ((Get-Service -Name 'containerd').Status -ne 'Running') { throw 'verify: the containerd service is not running' }
Write-Output 'image verified'

########## windows-build
# step: windows-build
$ErrorActionPreference = 'Stop'
# The real build of the guest, with its update revision (UBR).
$key = 'HKLM:\SOFTWARE\Microsoft\Windows NT\CurrentVersion'
$build = (Get-ItemProperty -Path $key).CurrentBuild
$ubr = (Get-ItemProperty -Path $key).UBR
Write-Output "WINDOWS-BUILD=10.0.$build.$ubr"


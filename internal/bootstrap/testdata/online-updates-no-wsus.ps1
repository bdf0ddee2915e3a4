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
  $include = @('KB5070020', 'KB5070021')
  $exclude = @()
  $round = 0
  while ($true) {
    $round++
    if ($round -gt 10) { throw 'updates still apply after 10 rounds of search and install' }
    $searcher = $session.CreateUpdateSearcher()
    $search = $searcher.Search('IsInstalled=0 and IsHidden=0 and Type=''Software'' and CategoryIDs contains ''cd5ffd1e-e932-4e3a-bf74-18bf0b1bbd83''')
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


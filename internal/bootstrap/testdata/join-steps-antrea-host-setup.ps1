########## antrea-host-setup
# Join step antrea-host-setup: the host prerequisites of Antrea's Windows
# agent (antrea-io/antrea docs/windows.md, "Windows Node prerequisites" and
# "Test-signed OVS driver"):
# - the Hyper-V PowerShell module: antrea-agent runs Get-VMSwitch and
#   Enable-VMSwitchExtension to put the OVS extension on its HNS network's
#   switch (pkg/agent/util/winnet/net_windows.go);
# - TESTSIGNING, for the test-signed OVS kernel driver of the antrea-windows
#   image that the DaemonSet's install-ovs-driver init container installs
#   ("Bcdedit.exe -set TESTSIGNING ON", then Restart-Computer). The running
#   system's boot options say whether this boot has it.
$ErrorActionPreference = 'Stop'
$restart = $false
if (-not (Get-WindowsFeature -Name 'Hyper-V-PowerShell').Installed) {
  if ((Install-WindowsFeature -Name 'Hyper-V-PowerShell').RestartNeeded -eq 'Yes') {
    $restart = $true
  }
}
$options = (Get-ItemProperty -Path 'HKLM:\SYSTEM\CurrentControlSet\Control' -Name 'SystemStartOptions').SystemStartOptions
if ($options -notmatch 'TESTSIGNING') {
  & bcdedit.exe /set testsigning on
  if ($LASTEXITCODE -ne 0) { exit $LASTEXITCODE }
  $restart = $true
}
if ($restart) {
  Write-Output 'BOOTSTRAP-REBOOT-REQUESTED'
  Restart-Computer -Force
}


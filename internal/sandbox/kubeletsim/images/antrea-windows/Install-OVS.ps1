<#
  The simulator's antrea-windows image carries this as /k/antrea/Install-OVS.ps1.
  It is antrea-io/antrea v2.2.0 hack/windows/Install-OVS.ps1 reduced to the path the
  install-ovs-driver init container takes (-LocalFile <the image's /openvswitch>
  -InstallUserspace $false): CheckAndInstallOVSDriver, the OVSext driver staged on a
  host path (netcfg fails on the container's mount with containerd 1.7+, 0x80070003)
  and installed with netcfg. Left out, and not modelled by the simulator: the VC
  redistributables, the PowerShell modules, OpenSSL, pnputil's clean-up of older
  driver packages, the version comparison (an installed OVSExt is kept), and the
  import of the driver's signer into LocalMachine\TrustedPublisher and Root. The
  userspace services (-InstallUserspace $true) are refused: the containerized OVS
  of antrea-windows-with-ovs.yml does not use them. Upstream's Log (Tee-Object to
  install_ovs.log) is Write-Host here.
#>
Param(
    [parameter(Mandatory = $false)] [string] $DownloadURL,
    [parameter(Mandatory = $false)] [string] $OVSInstallDir = "C:\openvswitch",
    [parameter(Mandatory = $false)] [string] $LocalFile,
    [parameter(Mandatory = $false)] [bool] $InstallUserspace = $true,
    [parameter(Mandatory = $false)] [string] $LocalSSLFile
)

$ErrorActionPreference = "Stop"

if ($InstallUserspace -or $LocalFile -eq "" -or $DownloadURL -ne "") {
    Write-Host "The simulated antrea-windows image installs the OVS driver only (-LocalFile <dir> -InstallUserspace `$false)"
    exit 1
}
if ("$LocalFile" -eq "$OVSInstallDir") {
    Write-Host "LocalFile and OVSInstallDir must not be the same, exiting"
    exit 1
}
if (-not (Test-Path $LocalFile)) {
    Write-Host "Path $LocalFile doesn't exist, exit"
    exit 1
}

$OVSDriverPath = "$LocalFile\driver"
Write-Host "Installing OVS kernel driver"
$ovsInstalled = $(netcfg -q ovsext) -like "*is installed*"
if ($ovsInstalled) {
    Write-Host "OVSExt driver is already installed"
    exit 0
}

# Copy the driver to a host path (not under the container's mount path) and
# install ovsext.inf from there.
$driverStagingPath = "${OVSInstallDir}\driver"
if (Test-Path $driverStagingPath) {
    Remove-Item -Recurse $driverStagingPath
}
New-Item -ItemType Directory -Force -Path $driverStagingPath | Out-Null
foreach ($f in 'ovsext.inf', 'OVSExt.sys', 'ovsext.cat') {
    Copy-Item -Path "$OVSDriverPath\$f" -Destination "$driverStagingPath\$f"
}
$result = netcfg -l "$driverStagingPath\ovsext.inf" -c s -i OVSExt
if ($result -like '*failed*') {
    Write-Host "Failed to install OVSExt driver: $result"
    exit 1
}
Write-Host "OVSExt driver has been installed"
Write-Host "OVS Installation Complete!"

# Init container install-ovs-driver of DaemonSet antrea-agent-windows: after
# antrea-io/antrea build/charts/antrea-windows/conf/ovs/Install-OVSDriver.ps1,
# the OVS kernel driver (the Hyper-V switch extension) from the
# antrea-windows image, installed by the image's Install-OVS.ps1.
$ErrorActionPreference = 'Stop'
$mountPath = $env:CONTAINER_SANDBOX_MOUNT_POINT
$mountPath = ($mountPath.Replace('\', '/')).TrimEnd('/')
$OVSInstallScript = $mountPath + '/k/antrea/Install-OVS.ps1'
if (-not (Test-Path -Path $OVSInstallScript)) {
    Write-Host "Installation script not found: $OVSInstallScript, you may be using an invalid antrea-windows container image"
    exit 1
}
& $OVSInstallScript -LocalFile ($mountPath + '/openvswitch') -InstallUserspace $false
exit $LASTEXITCODE

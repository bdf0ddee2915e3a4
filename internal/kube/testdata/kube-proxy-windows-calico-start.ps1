# kube-proxy of a Calico (VXLAN) Windows node, run by the HostProcess
# container of DaemonSet kube-proxy-windows-calico with its own ServiceAccount
# (bound to system:node-proxier). After Calico for Windows'
# kube-proxy-service.ps1 (projectcalico/calico v3.27
# node/windows-packaging/CalicoWindows/kubernetes): wait for Calico's
# initialisation, then take the source VIP of the host endpoint Calico_ep
# that calico-node's startup made on the Calico network.
$ErrorActionPreference = 'Stop'
$mount = $env:CONTAINER_SANDBOX_MOUNT_POINT

New-Item -ItemType Directory -Force -Path 'C:\var\lib\kube-proxy-windows-calico' | Out-Null
$kubeconfig = 'C:\var\lib\kube-proxy-windows-calico\kubeconfig.conf'
$conf = (Get-Content -Path ($mount + '/etc/kube-proxy-windows-calico/kubeconfig.conf') -Raw).Replace('CONTAINER_SANDBOX_MOUNT_POINT', $mount)
Set-Content -Path $kubeconfig -Value $conf

# calico-node-windows writes the node name file once its startup made the
# network: a FileSystemWatcher wakes the script the moment it appears.
New-Item -ItemType Directory -Force -Path 'C:\var\lib\calico' | Out-Null
$watcher = [IO.FileSystemWatcher]::new('C:\var\lib\calico', 'nodename')
for ($i = 0; ($i -lt 90) -and -not (Test-Path -Path 'C:\var\lib\calico\nodename'); $i++) {
  Write-Output ('waiting for calico-node to write ' + 'C:\var\lib\calico\nodename')
  $null = $watcher.WaitForChanged('Created, Renamed', 2000)
}
$watcher.Dispose()
if (-not (Test-Path -Path 'C:\var\lib\calico\nodename')) {
  throw ('calico-node has not initialised this node (is the calico-node-windows pod of this node running?)')
}
$vip = (Get-HnsEndpoint | Where-Object { $_.Name -eq 'Calico_ep' }).IPAddress
if (-not $vip) { throw 'HNS endpoint Calico_ep not found: calico-node has not made the Calico network' }
Write-Output ('source VIP ' + $vip)

& 'C:\k\kube-proxy.exe' ('--kubeconfig=' + $kubeconfig) ('--hostname-override=' + $env:NODE_NAME) '--proxy-mode=kernelspace' '--network-name=Calico' ('--source-vip=' + $vip) '--cluster-cidr=10.244.0.0/16' '--v=2'
exit $LASTEXITCODE

# kube-proxy of a flannel (VXLAN overlay) Windows node, run by the HostProcess
# container of DaemonSet kube-proxy-windows with its own ServiceAccount
# (bound to system:node-proxier). After kubernetes-sigs/sig-windows-tools
# hostprocess/flannel/kube-proxy/start.ps1.
$ErrorActionPreference = 'Stop'
$mount = $env:CONTAINER_SANDBOX_MOUNT_POINT

# The kubeconfig names the ServiceAccount token and CA under the container's
# mount point, which client-go cannot expand (kubernetes/kubernetes#104490).
New-Item -ItemType Directory -Force -Path 'C:\var\lib\kube-proxy-windows' | Out-Null
$kubeconfig = 'C:\var\lib\kube-proxy-windows\kubeconfig.conf'
$conf = (Get-Content -Path ($mount + '/etc/kube-proxy-windows/kubeconfig.conf') -Raw).Replace('CONTAINER_SANDBOX_MOUNT_POINT', $mount)
Set-Content -Path $kubeconfig -Value $conf

# winkernel needs a source VIP on an overlay: an address of this node's pod
# subnet that no pod gets. Upstream reserves it with host-local IPAM in the
# store the CNI plugin uses (kubernetes/kubernetes#96996), once: a restart
# reuses the reservation. The node's subnet is flannel's lease, which
# flanneld writes to C:\run\flannel\subnet.env (a temporary file renamed into
# place, so it appears whole), after it created the HNS network kube-proxy
# needs. A FileSystemWatcher wakes the script the moment it appears; its
# timeout only catches a file that appeared between Test-Path and the wait.
$subnetFile = 'C:\run\flannel\subnet.env'
New-Item -ItemType Directory -Force -Path 'C:\run\flannel' | Out-Null
$watcher = [IO.FileSystemWatcher]::new('C:\run\flannel', 'subnet.env')
for ($i = 0; ($i -lt 90) -and -not (Test-Path -Path $subnetFile); $i++) {
  Write-Output ('waiting for flannel to write ' + $subnetFile)
  $null = $watcher.WaitForChanged('Created, Renamed', 2000)
}
$watcher.Dispose()
if (-not (Test-Path -Path $subnetFile)) {
  throw ('flannel has not written ' + $subnetFile + ' (is the kube-flannel-ds-windows pod of this node running?)')
}
$vipFile = 'C:\sourcevip\sourceVip.json'
if (-not (Test-Path -Path $vipFile)) {
  $subnet = ((Get-Content -Path $subnetFile | Where-Object { $_ -like 'FLANNEL_SUBNET=*' }) -split '=')[1]
  $address, $prefix = $subnet -split '/'
  $bytes = ([Net.IPAddress]::Parse($address)).GetAddressBytes()
  for ($b = 0; $b -lt 4; $b++) {
    $keep = [Math]::Min([Math]::Max([int]$prefix - 8 * $b, 0), 8)
    $bytes[$b] = $bytes[$b] -band [int](256 - [Math]::Pow(2, 8 - $keep))
  }
  $network = ([Net.IPAddress]::new($bytes)).ToString() + '/' + $prefix
  New-Item -ItemType Directory -Force -Path 'C:\sourcevip' | Out-Null
  $request = '{"cniVersion":"0.3.0","name":"' + 'flannel.4096' + '","ipam":{"type":"host-local","ranges":[[{"subnet":"' + $network + '"}]],"dataDir":"/var/lib/cni/networks"}}'
  $env:CNI_COMMAND = 'ADD'
  $env:CNI_CONTAINERID = 'kube-proxy-source-vip'
  $env:CNI_NETNS = 'none'
  $env:CNI_IFNAME = 'none'
  $env:CNI_PATH = 'C:\opt\cni\bin'
  $reply = $request | & 'C:\opt\cni\bin\host-local.exe'
  if ($LASTEXITCODE) { throw ('host-local.exe could not reserve a source VIP in ' + $network + ' (exit code ' + $LASTEXITCODE + '): ' + $reply) }
  Set-Content -Path $vipFile -Value $reply
}
$vip = ((((Get-Content -Path $vipFile -Raw) | ConvertFrom-Json).ips[0].address) -split '/')[0]
Write-Output ('source VIP ' + $vip)

# WinOverlay is GA and locked on since v1.34: no feature gate to pass.
& 'C:\k\kube-proxy.exe' ('--kubeconfig=' + $kubeconfig) ('--hostname-override=' + $env:NODE_NAME) '--proxy-mode=kernelspace' '--network-name=flannel.4096' ('--source-vip=' + $vip) '--cluster-cidr=10.244.0.0/16' '--v=2'
exit $LASTEXITCODE

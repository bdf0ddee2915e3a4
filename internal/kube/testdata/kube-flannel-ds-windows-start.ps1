# flanneld of a flannel (VXLAN overlay) Windows node, run by the HostProcess
# container of DaemonSet kube-flannel-ds-windows with flannel's own
# ServiceAccount and ClusterRole. After kubernetes-sigs/sig-windows-tools
# hostprocess/flannel/flanneld/start.ps1; the CNI configuration is the
# join's (C:\etc\cni\net.d\10-flannel.conflist), so this only runs flanneld.
$ErrorActionPreference = 'Stop'
$mount = $env:CONTAINER_SANDBOX_MOUNT_POINT

# The kubeconfig names the ServiceAccount token and CA under the container's
# mount point, which client-go cannot expand (kubernetes/kubernetes#104490).
New-Item -ItemType Directory -Force -Path 'C:\var\lib\kube-flannel-windows' | Out-Null
$kubeconfig = 'C:\var\lib\kube-flannel-windows\kubeconfig.conf'
$conf = (Get-Content -Path ($mount + '/etc/kube-flannel-windows/kubeconfig.conf') -Raw).Replace('CONTAINER_SANDBOX_MOUNT_POINT', $mount)
Set-Content -Path $kubeconfig -Value $conf
New-Item -ItemType Directory -Force -Path 'C:\etc\kube-flannel' | Out-Null
Copy-Item -Path ($mount + '/etc/kube-flannel-windows/net-conf.json') -Destination 'C:\etc\kube-flannel\net-conf.json' -Force

# POD_NAME, POD_NAMESPACE and NODE_NAME come from the downward API; flanneld
# writes its lease to C:\run\flannel\subnet.env, which kube-proxy waits for.
& 'C:\k\flanneld.exe' '--kube-subnet-mgr' ('--kubeconfig-file=' + $kubeconfig) '--net-config-path=C:\etc\kube-flannel\net-conf.json' ('--iface=' + $env:HOST_IP)
exit $LASTEXITCODE

# calico-node of a Calico (VXLAN, Calico IPAM) Windows node, run by the
# HostProcess container of DaemonSet calico-node-windows with its own
# ServiceAccount and ClusterRole. After Calico for Windows' node-service.ps1
# and felix-service.ps1 (projectcalico/calico node/windows-packaging): the
# startup once (an affine IPAM block, the Calico HNS network, the VXLAN
# tunnel, NetworkUnavailable), then Felix. The operator runs them as two
# containers of one pod; here one container runs them in turn. The CNI
# configuration is the join's (C:\etc\cni\net.d\10-calico.conflist).
$ErrorActionPreference = 'Stop'
$mount = $env:CONTAINER_SANDBOX_MOUNT_POINT

# The kubeconfig names the ServiceAccount token and CA under the container's
# mount point, which client-go cannot expand (kubernetes/kubernetes#104490).
New-Item -ItemType Directory -Force -Path 'C:\var\lib\calico-node-windows' | Out-Null
$conf = (Get-Content -Path ($mount + '/etc/calico-node-windows/kubeconfig.conf') -Raw).Replace('CONTAINER_SANDBOX_MOUNT_POINT', $mount)
Set-Content -Path 'C:\var\lib\calico-node-windows\kubeconfig.conf' -Value $conf
# The CNI plugin's kubeconfig (the operator's calico-kubeconfig in the CNI
# configuration folder): the same identity, valid while this pod runs.
Set-Content -Path 'C:\etc\cni\net.d\calico-kubeconfig' -Value $conf

# The CNI plugins from the image's copy of Calico's archive into the CNI bin
# dir, as Calico's install-cni does (cni-plugin/pkg/install).
New-Item -ItemType Directory -Force -Path 'C:\opt\cni\bin' | Out-Null
Copy-Item -Path 'C:\CalicoWindows\cni\calico.exe' -Destination 'C:\opt\cni\bin\calico.exe' -Force
Copy-Item -Path 'C:\CalicoWindows\cni\calico-ipam.exe' -Destination 'C:\opt\cni\bin\calico-ipam.exe' -Force

# NODENAME, DATASTORE_TYPE, KUBECONFIG, CALICO_NETWORKING_BACKEND and
# VXLAN_VNI come from the DaemonSet's environment.
& 'C:\CalicoWindows\calico-node.exe' '-startup' '-complete-startup'
if ($LASTEXITCODE) { exit $LASTEXITCODE }
New-Item -ItemType Directory -Force -Path 'C:\var\lib\calico' | Out-Null
Set-Content -Path 'C:\var\lib\calico\nodename' -Value $env:NODENAME
& 'C:\CalicoWindows\calico-node.exe' '-felix'
exit $LASTEXITCODE

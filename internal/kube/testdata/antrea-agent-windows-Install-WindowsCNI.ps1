# Init container install-cni of DaemonSet antrea-agent-windows: after
# antrea-io/antrea build/charts/antrea-windows/conf/Install-WindowsCNI.ps1.
# The ServiceAccount token and CA go where antrea-agent's in-cluster client
# reads them (C:\var\run\secrets\kubernetes.io\serviceaccount), the CNI
# plugins of the antrea-windows image to C:\opt\cni\bin and its CNI
# configuration to C:\etc\cni\net.d\10-antrea.conflist.
$ErrorActionPreference = 'Stop'
$mountPath = $env:CONTAINER_SANDBOX_MOUNT_POINT
$mountPath = ($mountPath.Replace('\', '/')).TrimEnd('/')
New-Item -ItemType Directory -Force -Path 'C:\var\log\antrea' | Out-Null
$serviceAccountPath = 'C:\var\run\secrets\kubernetes.io\serviceaccount'
New-Item -ItemType Directory -Force -Path $serviceAccountPath | Out-Null
Copy-Item -Path ($mountPath + '/var/run/secrets/kubernetes.io/serviceaccount/token') -Destination ($serviceAccountPath + '\token') -Force
Copy-Item -Path ($mountPath + '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt') -Destination ($serviceAccountPath + '\ca.crt') -Force
New-Item -ItemType Directory -Force -Path 'C:\opt\cni\bin' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\etc\cni\net.d' | Out-Null
# The image's k/antrea/cni holds antrea.exe and host-local.exe
# (build/images/Dockerfile.build.windows); upstream copies them with a
# wildcard.
foreach ($plugin in 'antrea.exe', 'host-local.exe') {
    Copy-Item -Path ($mountPath + '/k/antrea/cni/' + $plugin) -Destination ('C:\opt\cni\bin' + '\' + $plugin) -Force
}
Copy-Item -Path ($mountPath + '/var/lib/antrea-windows/antrea-cni.conflist') -Destination 'C:\etc\cni\net.d\10-antrea.conflist' -Force

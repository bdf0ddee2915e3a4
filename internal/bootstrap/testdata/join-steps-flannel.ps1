########## join-files
# step: join-files
$ErrorActionPreference = 'Stop'
# The files the kubelet reads: the cluster CA, the bootstrap kubeconfig (a
# short-lived bootstrap token, never an admin credential) and the kubelet
# configuration.
New-Item -ItemType Directory -Force -Path 'C:\k' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\k\pki' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\etc\cni\net.d' | Out-Null
[IO.File]::WriteAllBytes('C:\k\ca.crt', [Convert]::FromBase64String('LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUIKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo='))
[IO.File]::WriteAllBytes('C:\k\bootstrap-kubeconfig', [Convert]::FromBase64String('YXBpVmVyc2lvbjogdjEKY2x1c3RlcnM6Ci0gY2x1c3RlcjoKICAgIGNlcnRpZmljYXRlLWF1dGhvcml0eS1kYXRhOiBMUzB0TFMxQ1JVZEpUaUJEUlZKVVNVWkpRMEZVUlMwdExTMHRDazFKU1VJS0xTMHRMUzFGVGtRZ1EwVlNWRWxHU1VOQlZFVXRMUzB0TFFvPQogICAgc2VydmVyOiBodHRwczovLzEwLjAuMC4xMDo2NDQzCiAgbmFtZToga3ViZXJuZXRlcwpjb250ZXh0czoKLSBjb250ZXh0OgogICAgY2x1c3Rlcjoga3ViZXJuZXRlcwogICAgdXNlcjogdGxzLWJvb3RzdHJhcC10b2tlbi11c2VyCiAgbmFtZTogdGxzLWJvb3RzdHJhcC10b2tlbi11c2VyQGt1YmVybmV0ZXMKY3VycmVudC1jb250ZXh0OiB0bHMtYm9vdHN0cmFwLXRva2VuLXVzZXJAa3ViZXJuZXRlcwpraW5kOiBDb25maWcKdXNlcnM6Ci0gbmFtZTogdGxzLWJvb3RzdHJhcC10b2tlbi11c2VyCiAgdXNlcjoKICAgIHRva2VuOiBhYmNkZWYuMDEyMzQ1Njc4OWFiY2RlZgo='))
[IO.File]::WriteAllBytes('C:\k\kubelet-config.yaml', [Convert]::FromBase64String('YXBpVmVyc2lvbjoga3ViZWxldC5jb25maWcuazhzLmlvL3YxYmV0YTEKYXV0aGVudGljYXRpb246CiAgYW5vbnltb3VzOgogICAgZW5hYmxlZDogZmFsc2UKICB3ZWJob29rOgogICAgZW5hYmxlZDogdHJ1ZQogIHg1MDk6CiAgICBjbGllbnRDQUZpbGU6IEM6XGtcY2EuY3J0CmF1dGhvcml6YXRpb246CiAgbW9kZTogV2ViaG9vawpjZ3JvdXBzUGVyUU9TOiBmYWxzZQpjbHVzdGVyRE5TOgotIDEwLjk2LjAuMTAKY2x1c3RlckRvbWFpbjogY2x1c3Rlci5sb2NhbApjb250YWluZXJSdW50aW1lRW5kcG9pbnQ6IG5waXBlOi8vLy8uL3BpcGUvY29udGFpbmVyZC1jb250YWluZXJkCmVuZm9yY2VOb2RlQWxsb2NhdGFibGU6IFtdCmhhaXJwaW5Nb2RlOiBwcm9taXNjdW91cy1icmlkZ2UKa2luZDogS3ViZWxldENvbmZpZ3VyYXRpb24KbWF4UG9kczogMTEwCnJlZ2lzdGVyV2l0aFRhaW50czoKLSBlZmZlY3Q6IE5vU2NoZWR1bGUKICBrZXk6IG9zCiAgdmFsdWU6IHdpbmRvd3MKcmVzb2x2Q29uZjogIiIKcm90YXRlQ2VydGlmaWNhdGVzOiB0cnVlCg=='))
Write-Output 'node files written'

########## flannel
# step: flannel
$ErrorActionPreference = 'Stop'
# flannel: net-conf.json (VXLAN with VNI 4096 and port 4789, as Windows
# requires), the node's CNI configuration, and flanneld as a service.
New-Item -ItemType Directory -Force -Path 'C:\etc\kube-flannel' | Out-Null
[IO.File]::WriteAllBytes('C:\etc\kube-flannel\net-conf.json', [Convert]::FromBase64String('ewogICJCYWNrZW5kIjogewogICAgIlBvcnQiOiA0Nzg5LAogICAgIlR5cGUiOiAidnhsYW4iLAogICAgIlZOSSI6IDQwOTYsCiAgICAibmFtZSI6ICJmbGFubmVsLjQwOTYiCiAgfSwKICAiTmV0d29yayI6ICIxMC4yNDQuMC4wLzE2Igp9'))
[IO.File]::WriteAllBytes('C:\etc\cni\net.d\10-flannel.conflist', [Convert]::FromBase64String('ewogICJjbmlWZXJzaW9uIjogIjAuMy4wIiwKICAibmFtZSI6ICJmbGFubmVsLjQwOTYiLAogICJwbHVnaW5zIjogWwogICAgewogICAgICAiZGVsZWdhdGUiOiB7CiAgICAgICAgImRucyI6IHsKICAgICAgICAgICJOYW1lc2VydmVycyI6IFsKICAgICAgICAgICAgIjEwLjk2LjAuMTAiCiAgICAgICAgICBdLAogICAgICAgICAgIlNlYXJjaCI6IFsKICAgICAgICAgICAgInN2Yy5jbHVzdGVyLmxvY2FsIgogICAgICAgICAgXQogICAgICAgIH0sCiAgICAgICAgInBvbGljaWVzIjogWwogICAgICAgICAgewogICAgICAgICAgICAiTmFtZSI6ICJFbmRwb2ludFBvbGljeSIsCiAgICAgICAgICAgICJWYWx1ZSI6IHsKICAgICAgICAgICAgICAiRXhjZXB0aW9uTGlzdCI6IFsKICAgICAgICAgICAgICAgICIxMC4yNDQuMC4wLzE2IiwKICAgICAgICAgICAgICAgICIxMC45Ni4wLjAvMTIiCiAgICAgICAgICAgICAgXSwKICAgICAgICAgICAgICAiVHlwZSI6ICJPdXRCb3VuZE5BVCIKICAgICAgICAgICAgfQogICAgICAgICAgfQogICAgICAgIF0sCiAgICAgICAgInR5cGUiOiAid2luLW92ZXJsYXkiCiAgICAgIH0sCiAgICAgICJ0eXBlIjogImZsYW5uZWwiCiAgICB9CiAgXQp9'))
[Environment]::SetEnvironmentVariable('NODE_NAME', 'win-0', 'Machine')
if (Get-Service -Name 'flanneld' -ErrorAction SilentlyContinue) {
  Stop-Service -Name 'flanneld' -Force
  sc.exe delete flanneld | Out-Null
}
New-Service -Name 'flanneld' -BinaryPathName 'C:\k\flanneld.exe --kubeconfig-file=C:\k\kubeconfig --iface=10.0.0.21 --ip-masq=1 --kube-subnet-mgr=1 --net-config-path=C:\etc\kube-flannel\net-conf.json' -DisplayName 'flannel' -StartupType Automatic | Out-Null
Start-Service -Name 'flanneld'
Write-Output 'flannel configured'

########## kubelet-service
# step: kubelet-service
$ErrorActionPreference = 'Stop'
# (sc.exe delete, not Remove-Service: Windows PowerShell 5.1 has none.)
# (Re)create the kubelet service with this command line and start it; it
# starts again at every boot.
if (Get-Service -Name 'kubelet' -ErrorAction SilentlyContinue) {
  Stop-Service -Name 'kubelet' -Force
  sc.exe delete kubelet | Out-Null
}
New-Service -Name 'kubelet' -BinaryPathName 'C:\k\kubelet.exe --windows-service --bootstrap-kubeconfig=C:\k\bootstrap-kubeconfig --kubeconfig=C:\k\kubeconfig --config=C:\k\kubelet-config.yaml --cert-dir=C:\k\pki --hostname-override=win-0 --node-ip=10.0.0.21 --v=2 --node-labels=example.com/pool=web,node.kubernetes.io/windows-build=10.0.20348' -DisplayName 'Kubernetes kubelet' -StartupType Automatic | Out-Null
Start-Service -Name 'kubelet'
Write-Output ('kubelet' + ' ' + (Get-Service -Name 'kubelet').Status)

########## kube-proxy-service
# step: kube-proxy-service
$ErrorActionPreference = 'Stop'
# (sc.exe delete, not Remove-Service: Windows PowerShell 5.1 has none.)
# (Re)create the kube-proxy service with this command line and start it; it
# starts again at every boot.
if (Get-Service -Name 'kube-proxy' -ErrorAction SilentlyContinue) {
  Stop-Service -Name 'kube-proxy' -Force
  sc.exe delete kube-proxy | Out-Null
}
New-Service -Name 'kube-proxy' -BinaryPathName 'C:\k\kube-proxy.exe --windows-service --kubeconfig=C:\k\kubeconfig --hostname-override=win-0 --proxy-mode=kernelspace --cluster-cidr=10.244.0.0/16 --v=2 --network-name=flannel.4096' -DisplayName 'Kubernetes kube-proxy' -StartupType Automatic | Out-Null
Start-Service -Name 'kube-proxy'
Write-Output ('kube-proxy' + ' ' + (Get-Service -Name 'kube-proxy').Status)


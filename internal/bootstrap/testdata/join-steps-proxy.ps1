########## join-files
# step: join-files
$ErrorActionPreference = 'Stop'
# The files the kubelet reads that hold no secret: the cluster CA, the
# kubelet configuration and, with flannel, the node's CNI configuration
# list. The bootstrap kubeconfig (a short-lived bootstrap token, never an
# admin credential) is uploaded once this script has protected C:\k
# (Step.Files): a script's text may land in the PowerShell event log. First,
# the answer files the customization left with the Administrator password
# go (Setup has finished with them), and the programs this node mode runs
# must be in the image.
if (Test-Path -LiteralPath 'C:\Windows\Panther\unattend.xml') { Remove-Item -LiteralPath 'C:\Windows\Panther\unattend.xml' -Recurse -Force }
if (Test-Path -LiteralPath 'C:\Windows\Panther\Unattend\unattend.xml') { Remove-Item -LiteralPath 'C:\Windows\Panther\Unattend\unattend.xml' -Recurse -Force }
if (Test-Path -LiteralPath 'C:\Windows\Panther\Unattend\autounattend.xml') { Remove-Item -LiteralPath 'C:\Windows\Panther\Unattend\autounattend.xml' -Recurse -Force }
if (Test-Path -LiteralPath 'C:\Windows\System32\Sysprep\unattend.xml') { Remove-Item -LiteralPath 'C:\Windows\System32\Sysprep\unattend.xml' -Recurse -Force }
if (Test-Path -LiteralPath 'C:\sysprep') { Remove-Item -LiteralPath 'C:\sysprep' -Recurse -Force }
if (Test-Path -LiteralPath 'C:\Windows\TEMP\vmware-imc') { Remove-Item -LiteralPath 'C:\Windows\TEMP\vmware-imc' -Recurse -Force }
if (-not (Test-Path -Path 'C:\k\kubelet.exe' -PathType Leaf)) { throw 'C:\k\kubelet.exe is missing: this node''s golden image predates what its networking mode needs; build a new windows_golden_image and replace the node' }
if (-not (Test-Path -Path 'C:\k\kube-log-runner.exe' -PathType Leaf)) { throw 'C:\k\kube-log-runner.exe is missing: this node''s golden image predates what its networking mode needs; build a new windows_golden_image and replace the node' }
if (-not (Test-Path -Path 'C:\k\kube-proxy.exe' -PathType Leaf)) { throw 'C:\k\kube-proxy.exe is missing: this node''s golden image predates what its networking mode needs; build a new windows_golden_image and replace the node' }
if (-not (Test-Path -Path 'C:\k\flanneld.exe' -PathType Leaf)) { throw 'C:\k\flanneld.exe is missing: this node''s golden image predates what its networking mode needs; build a new windows_golden_image and replace the node' }
if (-not (Test-Path -Path 'C:\opt\cni\bin\flannel.exe' -PathType Leaf)) { throw 'C:\opt\cni\bin\flannel.exe is missing: this node''s golden image predates what its networking mode needs; build a new windows_golden_image and replace the node' }
if (-not (Test-Path -Path 'C:\opt\cni\bin\win-overlay.exe' -PathType Leaf)) { throw 'C:\opt\cni\bin\win-overlay.exe is missing: this node''s golden image predates what its networking mode needs; build a new windows_golden_image and replace the node' }
if (-not (Test-Path -Path 'C:\opt\cni\bin\host-local.exe' -PathType Leaf)) { throw 'C:\opt\cni\bin\host-local.exe is missing: this node''s golden image predates what its networking mode needs; build a new windows_golden_image and replace the node' }
New-Item -ItemType Directory -Force -Path 'C:\k' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\k\pki' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\etc\cni\net.d' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\var\log\kubelet' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\etc\cni' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\opt\cni' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\opt\cni\bin' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\Program Files\containerd' | Out-Null
# Only LocalSystem and Administrators may read or change the kubelet's
# credentials and what it trusts and runs (bootstrap.HardenedDirs): the
# well-known SIDs S-1-5-18 and S-1-5-32-544, whatever the system's language.
$out = icacls.exe 'C:\k' /inheritance:r /grant:r '*S-1-5-18:(OI)(CI)F' '*S-1-5-32-544:(OI)(CI)F'
if ($LASTEXITCODE) { throw ('icacls.exe could not restrict ' + 'C:\k' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\k\pki' /inheritance:r /grant:r '*S-1-5-18:(OI)(CI)F' '*S-1-5-32-544:(OI)(CI)F'
if ($LASTEXITCODE) { throw ('icacls.exe could not restrict ' + 'C:\k\pki' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\etc\cni' /inheritance:r /grant:r '*S-1-5-18:(OI)(CI)F' '*S-1-5-32-544:(OI)(CI)F'
if ($LASTEXITCODE) { throw ('icacls.exe could not restrict ' + 'C:\etc\cni' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\etc\cni\net.d' /inheritance:r /grant:r '*S-1-5-18:(OI)(CI)F' '*S-1-5-32-544:(OI)(CI)F'
if ($LASTEXITCODE) { throw ('icacls.exe could not restrict ' + 'C:\etc\cni\net.d' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\opt\cni' /inheritance:r /grant:r '*S-1-5-18:(OI)(CI)F' '*S-1-5-32-544:(OI)(CI)F'
if ($LASTEXITCODE) { throw ('icacls.exe could not restrict ' + 'C:\opt\cni' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\opt\cni\bin' /inheritance:r /grant:r '*S-1-5-18:(OI)(CI)F' '*S-1-5-32-544:(OI)(CI)F'
if ($LASTEXITCODE) { throw ('icacls.exe could not restrict ' + 'C:\opt\cni\bin' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\Program Files\containerd' /inheritance:r /grant:r '*S-1-5-18:(OI)(CI)F' '*S-1-5-32-544:(OI)(CI)F'
if ($LASTEXITCODE) { throw ('icacls.exe could not restrict ' + 'C:\Program Files\containerd' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
[IO.File]::WriteAllBytes('C:\k\ca.crt', [Convert]::FromBase64String('LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUIKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo='))
[IO.File]::WriteAllBytes('C:\k\kubelet-config.yaml', [Convert]::FromBase64String('YXBpVmVyc2lvbjoga3ViZWxldC5jb25maWcuazhzLmlvL3YxYmV0YTEKYXV0aGVudGljYXRpb246CiAgYW5vbnltb3VzOgogICAgZW5hYmxlZDogZmFsc2UKICB3ZWJob29rOgogICAgZW5hYmxlZDogdHJ1ZQogIHg1MDk6CiAgICBjbGllbnRDQUZpbGU6IEM6XGtcY2EuY3J0CmF1dGhvcml6YXRpb246CiAgbW9kZTogV2ViaG9vawpjZ3JvdXBzUGVyUU9TOiBmYWxzZQpjbHVzdGVyRE5TOgotIDEwLjk2LjAuMTAKY2x1c3RlckRvbWFpbjogY2x1c3Rlci5sb2NhbApjb250YWluZXJSdW50aW1lRW5kcG9pbnQ6IG5waXBlOi8vLy8uL3BpcGUvY29udGFpbmVyZC1jb250YWluZXJkCmVuZm9yY2VOb2RlQWxsb2NhdGFibGU6IFtdCmhhaXJwaW5Nb2RlOiBwcm9taXNjdW91cy1icmlkZ2UKa2luZDogS3ViZWxldENvbmZpZ3VyYXRpb24KbWF4UG9kczogMTEwCnJlZ2lzdGVyV2l0aFRhaW50czoKLSBlZmZlY3Q6IE5vU2NoZWR1bGUKICBrZXk6IG9zCiAgdmFsdWU6IHdpbmRvd3MKcmVzb2x2Q29uZjogIiIKcm90YXRlQ2VydGlmaWNhdGVzOiB0cnVlCg=='))
[IO.File]::WriteAllBytes('C:\etc\cni\net.d\10-flannel.conflist', [Convert]::FromBase64String('eyJjbmlWZXJzaW9uIjoiMC4zLjAiLCJuYW1lIjoiZmxhbm5lbC40MDk2IiwicGx1Z2lucyI6W3sidHlwZSI6ImZsYW5uZWwifV19'))
Write-Output 'node files written'

# ---------- join-files uploads C:\k\bootstrap-kubeconfig:
# | apiVersion: v1
# | clusters:
# | - cluster:
# |     certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUIKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=
# |     server: https://10.0.0.10:6443
# |   name: kubernetes
# | contexts:
# | - context:
# |     cluster: kubernetes
# |     user: tls-bootstrap-token-user
# |   name: tls-bootstrap-token-user@kubernetes
# | current-context: tls-bootstrap-token-user@kubernetes
# | kind: Config
# | users:
# | - name: tls-bootstrap-token-user
# |   user:
# |     token: abcdef.0123456789abcdef
########## kubelet-firewall
# step: kubelet-firewall
$ErrorActionPreference = 'Stop'
# The kubelet's port admits this cluster only: the API servers' addresses,
# where their connections to a kubelet come from, and the pod network, where
# in-cluster scrapers such as metrics-server run. Kubernetes' "Ports and
# Protocols" names the kubelet API's users as the node itself and the control
# plane. Upstream's recipes open 10250 to any address (sig-windows-tools
# PrepareNode.ps1, WMCO's install-firewall-rules.ps1, Calico for Windows'
# "kubectl exec 10250" rule); the rule the image made (disabled, or from any
# address in an image of the earlier design) is narrowed to these and enabled.
$admit = @('10.0.0.10', '10.244.0.0/16')
if (Get-NetFirewallRule -Name 'kubelet-10250' -ErrorAction SilentlyContinue) {
  Set-NetFirewallRule -Name 'kubelet-10250' -RemoteAddress $admit -Enabled True
} else {
  New-NetFirewallRule -Name 'kubelet-10250' -DisplayName 'kubelet (TCP 10250)' -Direction Inbound -Protocol TCP -LocalPort 10250 -Action Allow -RemoteAddress $admit | Out-Null
}
Write-Output ('kubelet port admits ' + ($admit -join ', '))

########## remote-logins-off
# step: remote-logins-off
$ErrorActionPreference = 'Stop'
# Under transport type = "vmtools" nothing reaches this node over WinRM, so
# the HTTP listener Windows Server creates at setup goes, with the stock
# firewall rules that admit it: a stolen or guessed Administrator password
# then opens no remote shell on 5985. Remove-WSManInstance deletes the
# listener (learn.microsoft.com/powershell/module/microsoft.wsman.management/remove-wsmaninstance,
# example 1); the rules are disabled, not deleted, as Windows ships them.
if (Get-WSManInstance -ResourceURI winrm/config/Listener -Enumerate | Where-Object { $_.Transport -eq 'HTTP' }) {
  Remove-WSManInstance -ResourceURI winrm/config/Listener -SelectorSet @{Address = '*'; Transport = 'HTTP'}
}
foreach ($rule in @('WINRM-HTTP-In-TCP', 'WINRM-HTTP-In-TCP-PUBLIC')) {
  if (Get-NetFirewallRule -Name $rule -ErrorAction SilentlyContinue) {
    Set-NetFirewallRule -Name $rule -Enabled False
  }
}
Write-Output 'WinRM HTTP listener removed, its firewall rules disabled'

# OpenSSH Server, where the template has it (Windows Server 2025 ships it; on
# 2019 and 2022 it is a Feature on Demand someone added): password logins
# off, keys only. sshd takes the first value it reads of a keyword, and the
# lines after a Match apply only to the connections it matches, so the
# directive goes in the global section, before the stock "Match Group
# administrators" block (learn.microsoft.com/windows-server/administration/openssh/openssh-server-configuration;
# sshd_config(5)). sshd reads its configuration as it starts: a running one
# is restarted.
$sshdConfig = 'C:\ProgramData\ssh\sshd_config'
if ((Get-Service -Name 'sshd' -ErrorAction SilentlyContinue) -and (Test-Path -Path $sshdConfig)) {
  $global = @()
  $match = @()
  foreach ($line in @(Get-Content -Path $sshdConfig)) {
    if ($match.Count -gt 0 -or $line -match '^\s*Match\s') {
      $match += $line
    } elseif ($line -notmatch '^\s*PasswordAuthentication\s') {
      $global += $line
    }
  }
  Set-Content -Path $sshdConfig -Value ($global + @('PasswordAuthentication no') + $match)
  if ((Get-Service -Name 'sshd').Status -eq 'Running') {
    Restart-Service -Name 'sshd'
  }
  Write-Output 'OpenSSH password logins off'
} else {
  Write-Output 'no OpenSSH Server'
}

########## time-zone
# step: time-zone
$ErrorActionPreference = 'Stop'
# The time zone by its Windows ID (Set-TimeZone -Id, Windows PowerShell 5.1),
# where the guest has another: a clone's customization sets only what
# sysprep's legacy index can name, and UTC is not among it.
if ((Get-TimeZone).Id -ne 'UTC') { Set-TimeZone -Id 'UTC' }
Write-Output ('time zone ' + (Get-TimeZone).Id)

########## legacy-services
# step: legacy-services
$ErrorActionPreference = 'Stop'
# Nodes joined by the earlier design ran these agents as Windows services
# with the node's own credentials, which a v1.36 API server does not let
# them use. They run as HostProcess pods now (windows_node_networking):
# stop and delete the services (sc.exe delete, not Remove-Service: Windows
# PowerShell 5.1 has none) and the machine-wide NODE_NAME they relied on.
if (Get-Service -Name 'flanneld' -ErrorAction SilentlyContinue) {
  Stop-Service -Name 'flanneld' -Force
  $out = sc.exe delete 'flanneld'
  if ($LASTEXITCODE) { throw ('sc.exe delete ' + 'flanneld' + ' failed with exit code ' + $LASTEXITCODE + ': ' + $out) }
  Write-Output ('removed the ' + 'flanneld' + ' service of the earlier design')
}
if (Get-Service -Name 'kube-proxy' -ErrorAction SilentlyContinue) {
  Stop-Service -Name 'kube-proxy' -Force
  $out = sc.exe delete 'kube-proxy'
  if ($LASTEXITCODE) { throw ('sc.exe delete ' + 'kube-proxy' + ' failed with exit code ' + $LASTEXITCODE + ': ' + $out) }
  Write-Output ('removed the ' + 'kube-proxy' + ' service of the earlier design')
}
[Environment]::SetEnvironmentVariable('NODE_NAME', $null, 'Machine')
Write-Output 'no legacy agent services'

########## containerd-proxy
# step: containerd-proxy
$ErrorActionPreference = 'Stop'

# The proxy as the service's own environment: the Environment value
# (REG_MULTI_SZ, NAME=value each) of its key, which the service control
# manager adds to the environment of the process it starts. containerd on
# Windows reads a proxy only from its process environment (Go's
# ProxyFromEnvironment; kubernetes-sigs/sig-windows-tools#339), and a
# machine-wide variable would send every process through the proxy.
$key = 'HKLM\SYSTEM\CurrentControlSet\Services\containerd'
$want = 'HTTP_PROXY=http://proxy.example.com:3128\0HTTPS_PROXY=http://proxy.example.com:3128\0NO_PROXY=wsus.example.com,.corp.example.com,10.96.0.0/12'
$had = (Get-ItemProperty -Path ('HKLM:' + $key.Substring(4))).Environment
$changed = (($had -join '\0') -ne $want)
if ($changed) {
  $out = reg.exe add $key /v Environment /t REG_MULTI_SZ /d $want /f
  if ($LASTEXITCODE) { throw ('reg add ' + $key + ' Environment failed with exit code ' + $LASTEXITCODE + ': ' + $out) }
}
# A running service keeps the environment it started with: restart it.
if ($changed -and ((Get-Service -Name 'containerd').Status -eq 'Running')) {
  Restart-Service -Name 'containerd' -Force
}
if ($changed) { Write-Output ('containerd' + ' proxy environment set') } else { Write-Output ('containerd' + ' proxy environment unchanged') }


########## kubelet-service
# step: kubelet-service
$ErrorActionPreference = 'Stop'
# The kubelet service: kube-log-runner runs the kubelet and keeps its log
# (a service has no console), it starts after containerd (the container
# runtime it needs), at every boot, and the service control manager restarts
# it when it exits. sc.exe config on an existing service (a re-join, or a
# node of the earlier design) changes it in place: no delete-and-create
# race with a service marked for deletion.
$bin = 'C:\k\kube-log-runner.exe --log-file=C:\var\log\kubelet\kubelet.log --log-file-size=10Mi --log-file-age=168h C:\k\kubelet.exe --windows-service --bootstrap-kubeconfig=C:\k\bootstrap-kubeconfig --kubeconfig=C:\k\kubeconfig --config=C:\k\kubelet-config.yaml --cert-dir=C:\k\pki --hostname-override=win-0 --node-ip=10.0.0.21 --v=2 --node-labels=example.com/pool=web,node.kubernetes.io/windows-build=10.0.20348'
if (Get-Service -Name 'kubelet' -ErrorAction SilentlyContinue) {
  Stop-Service -Name 'kubelet' -Force
  $out = sc.exe config 'kubelet' binPath= $bin start= auto depend= 'containerd' DisplayName= 'Kubernetes kubelet'
  if ($LASTEXITCODE) { throw ('sc.exe config ' + 'kubelet' + ' failed with exit code ' + $LASTEXITCODE + ': ' + $out) }
} else {
  $out = sc.exe create 'kubelet' binPath= $bin start= auto depend= 'containerd' DisplayName= 'Kubernetes kubelet'
  if ($LASTEXITCODE) { throw ('sc.exe create ' + 'kubelet' + ' failed with exit code ' + $LASTEXITCODE + ': ' + $out) }
}
$out = sc.exe failure 'kubelet' reset= '86400' actions= 'restart/10000/restart/10000/restart/30000'
if ($LASTEXITCODE) { throw ('sc.exe failure ' + 'kubelet' + ' failed with exit code ' + $LASTEXITCODE + ': ' + $out) }
# The proxy as the service's own environment: the Environment value
# (REG_MULTI_SZ, NAME=value each) of its key, which the service control
# manager adds to the environment of the process it starts. containerd on
# Windows reads a proxy only from its process environment (Go's
# ProxyFromEnvironment; kubernetes-sigs/sig-windows-tools#339), and a
# machine-wide variable would send every process through the proxy.
$key = 'HKLM\SYSTEM\CurrentControlSet\Services\kubelet'
$want = 'HTTP_PROXY=http://proxy.example.com:3128\0HTTPS_PROXY=http://proxy.example.com:3128\0NO_PROXY=wsus.example.com,.corp.example.com,10.96.0.0/12'
$had = (Get-ItemProperty -Path ('HKLM:' + $key.Substring(4))).Environment
$changed = (($had -join '\0') -ne $want)
if ($changed) {
  $out = reg.exe add $key /v Environment /t REG_MULTI_SZ /d $want /f
  if ($LASTEXITCODE) { throw ('reg add ' + $key + ' Environment failed with exit code ' + $LASTEXITCODE + ': ' + $out) }
}
Start-Service -Name 'kubelet'
Write-Output ('kubelet' + ' ' + (Get-Service -Name 'kubelet').Status)


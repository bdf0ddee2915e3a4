########## prepare
# step: prepare
$ErrorActionPreference = 'Stop'

New-Item -ItemType Directory -Force -Path 'C:\k' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\k\downloads' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\Program Files\containerd' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\opt\cni\bin' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\etc\cni\net.d' | Out-Null
Write-Output 'directories ready'

########## containers-feature
# step: containers-feature
$ErrorActionPreference = 'Stop'
# Windows containers need the Containers feature; enabling it needs a restart.
if ((Get-WindowsFeature -Name 'Containers').Installed) {
  Write-Output 'Containers feature already installed'
} elseif ((Install-WindowsFeature -Name 'Containers').RestartNeeded -eq 'Yes') {
  Write-Output 'BOOTSTRAP-REBOOT-REQUESTED'
  Restart-Computer -Force
}

########## install-containerd
# step: install-containerd
$ErrorActionPreference = 'Stop'
# Download containerd, verify its SHA-256, and only then put it in place.
$want = 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB'
$target = 'C:\k\downloads\containerd-1.7.24-windows-amd64.tar.gz'
if ((Test-Path -LiteralPath $target) -and ((Get-FileHash -Algorithm SHA256 -LiteralPath $target).Hash -eq $want)) {
  Write-Output ('containerd already installed: ' + $target)
} else {
  $download = 'C:\k\downloads\containerd-1.7.24-windows-amd64.tar.gz.download'
  Invoke-WebRequest -UseBasicParsing -Uri 'https://github.com/containerd/containerd/releases/download/v1.7.24/containerd-1.7.24-windows-amd64.tar.gz' -OutFile $download
  $got = (Get-FileHash -Algorithm SHA256 -LiteralPath $download).Hash
  if ($got -ne $want) {
    Remove-Item -LiteralPath $download -Force
    throw "checksum mismatch for containerd from https://github.com/containerd/containerd/releases/download/v1.7.24/containerd-1.7.24-windows-amd64.tar.gz: expected $want, got $got"
  }
  Move-Item -LiteralPath $download -Destination $target -Force
  New-Item -ItemType Directory -Force -Path 'C:\Program Files\containerd' | Out-Null
  tar.exe -xzf $target -C 'C:\Program Files\containerd'
  Write-Output ('containerd installed: ' + $target)
}

########## install-kubelet
# step: install-kubelet
$ErrorActionPreference = 'Stop'
# Download kubelet, verify its SHA-256, and only then put it in place.
$want = 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB'
$target = 'C:\k\kubelet.exe'
if ((Test-Path -LiteralPath $target) -and ((Get-FileHash -Algorithm SHA256 -LiteralPath $target).Hash -eq $want)) {
  Write-Output ('kubelet already installed: ' + $target)
} else {
  $download = 'C:\k\kubelet.exe.download'
  Invoke-WebRequest -UseBasicParsing -Uri 'https://dl.k8s.io/release/v1.36.3/bin/windows/amd64/kubelet.exe' -OutFile $download
  $got = (Get-FileHash -Algorithm SHA256 -LiteralPath $download).Hash
  if ($got -ne $want) {
    Remove-Item -LiteralPath $download -Force
    throw "checksum mismatch for kubelet from https://dl.k8s.io/release/v1.36.3/bin/windows/amd64/kubelet.exe: expected $want, got $got"
  }
  Move-Item -LiteralPath $download -Destination $target -Force
  Write-Output ('kubelet installed: ' + $target)
}

########## install-kube-proxy
# step: install-kube-proxy
$ErrorActionPreference = 'Stop'
# Download kube-proxy, verify its SHA-256, and only then put it in place.
$want = 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB'
$target = 'C:\k\kube-proxy.exe'
if ((Test-Path -LiteralPath $target) -and ((Get-FileHash -Algorithm SHA256 -LiteralPath $target).Hash -eq $want)) {
  Write-Output ('kube-proxy already installed: ' + $target)
} else {
  $download = 'C:\k\kube-proxy.exe.download'
  Invoke-WebRequest -UseBasicParsing -Uri 'http://artifacts.internal:8080/k8s/v1.36.3/bin/windows/amd64/kube-proxy.exe' -OutFile $download
  $got = (Get-FileHash -Algorithm SHA256 -LiteralPath $download).Hash
  if ($got -ne $want) {
    Remove-Item -LiteralPath $download -Force
    throw "checksum mismatch for kube-proxy from http://artifacts.internal:8080/k8s/v1.36.3/bin/windows/amd64/kube-proxy.exe: expected $want, got $got"
  }
  Move-Item -LiteralPath $download -Destination $target -Force
  Write-Output ('kube-proxy installed: ' + $target)
}

########## install-cni-plugins
# step: install-cni-plugins
$ErrorActionPreference = 'Stop'
# Download cni-plugins, verify its SHA-256, and only then put it in place.
$want = 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB'
$target = 'C:\k\downloads\cni-plugins-windows-amd64-v1.6.2.zip'
if ((Test-Path -LiteralPath $target) -and ((Get-FileHash -Algorithm SHA256 -LiteralPath $target).Hash -eq $want)) {
  Write-Output ('cni-plugins already installed: ' + $target)
} else {
  $download = 'C:\k\downloads\cni-plugins-windows-amd64-v1.6.2.zip.download'
  Invoke-WebRequest -UseBasicParsing -Uri 'https://example.com/cni-plugins-windows-amd64-v1.6.2.zip' -OutFile $download
  $got = (Get-FileHash -Algorithm SHA256 -LiteralPath $download).Hash
  if ($got -ne $want) {
    Remove-Item -LiteralPath $download -Force
    throw "checksum mismatch for cni-plugins from https://example.com/cni-plugins-windows-amd64-v1.6.2.zip: expected $want, got $got"
  }
  Move-Item -LiteralPath $download -Destination $target -Force
  New-Item -ItemType Directory -Force -Path 'C:\opt\cni\bin' | Out-Null
  Expand-Archive -Path $target -DestinationPath 'C:\opt\cni\bin' -Force
  Write-Output ('cni-plugins installed: ' + $target)
}

########## install-wins
# step: install-wins
$ErrorActionPreference = 'Stop'
# Download wins, verify its SHA-256, and only then put it in place.
$want = 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB'
$target = 'C:\k\wins.exe'
if ((Test-Path -LiteralPath $target) -and ((Get-FileHash -Algorithm SHA256 -LiteralPath $target).Hash -eq $want)) {
  Write-Output ('wins already installed: ' + $target)
} else {
  $download = 'C:\k\wins.exe.download'
  Invoke-WebRequest -UseBasicParsing -Uri 'https://example.com/wins.exe' -OutFile $download
  $got = (Get-FileHash -Algorithm SHA256 -LiteralPath $download).Hash
  if ($got -ne $want) {
    Remove-Item -LiteralPath $download -Force
    throw "checksum mismatch for wins from https://example.com/wins.exe: expected $want, got $got"
  }
  Move-Item -LiteralPath $download -Destination $target -Force
  Write-Output ('wins installed: ' + $target)
}

########## containerd-service
# step: containerd-service
$ErrorActionPreference = 'Stop'
# containerd as a Windows service, with the pause image and CNI directories.
Set-Content -Path 'C:\Program Files\containerd\config.toml' -Value 'version = 2
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10.1"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runhcs-wcow-process"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runhcs-wcow-process]
    runtime_type = "io.containerd.runhcs.v1"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "C:\\opt\\cni\\bin"
    conf_dir = "C:\\etc\\cni\\net.d"
' -NoNewline
if (-not (Get-Service -Name 'containerd' -ErrorAction SilentlyContinue)) {
  New-Service -Name 'containerd' -BinaryPathName '"C:\Program Files\containerd\bin\containerd.exe" --run-service --config "C:\Program Files\containerd\config.toml"' -DisplayName 'containerd container runtime' -StartupType Automatic | Out-Null
}
Start-Service -Name 'containerd'
Write-Output ('containerd ' + (Get-Service -Name 'containerd').Status)

########## prepull-images
# step: prepull-images
$ErrorActionPreference = 'Stop'
# Pull the images every node needs, so the first pods start without waiting.
& 'C:\Program Files\containerd\bin\ctr.exe' -n k8s.io images pull 'mcr.microsoft.com/windows/nanoserver:ltsc2022'
Write-Output 'images pulled'

########## vmware-tools
# step: vmware-tools
$ErrorActionPreference = 'Stop'
# An empty exclude-nics makes VMware Tools report every NIC's address, so the
# guest IP stays visible in vSphere once container networking adds adapters.
New-Item -ItemType Directory -Force -Path 'C:\ProgramData\VMware\VMware Tools' | Out-Null
Set-Content -Path 'C:\ProgramData\VMware\VMware Tools\tools.conf' -Value "[guestinfo]`r`nexclude-nics=`r`n"
if (Get-Service -Name 'VMTools' -ErrorAction SilentlyContinue) {
  Restart-Service -Name 'VMTools'
}
Write-Output 'tools.conf written'

########## firewall
# step: firewall
$ErrorActionPreference = 'Stop'
# The API server reaches the kubelet on TCP 10250 for logs, exec and metrics.
if (-not (Get-NetFirewallRule -Name 'kubelet-10250' -ErrorAction SilentlyContinue)) {
  New-NetFirewallRule -Name 'kubelet-10250' -DisplayName 'kubelet (TCP 10250)' -Direction Inbound -Protocol TCP -LocalPort 10250 -Action Allow | Out-Null
}
Write-Output 'firewall rule present'

########## openssh
# step: openssh
$ErrorActionPreference = 'Stop'
# OpenSSH server with the operator's key for the Administrators group.
Add-WindowsCapability -Online -Name 'OpenSSH.Server~~~~0.0.1.0' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\ProgramData\ssh' | Out-Null
Set-Content -Path 'C:\ProgramData\ssh\administrators_authorized_keys' -Value 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOperatorKey operator@example.com'
icacls.exe 'C:\ProgramData\ssh\administrators_authorized_keys' /inheritance:r /grant 'Administrators:F' /grant 'SYSTEM:F' | Out-Null
if (Get-Service -Name 'sshd' -ErrorAction SilentlyContinue) {
  Set-Service -Name 'sshd' -StartupType Automatic
  Start-Service -Name 'sshd'
}
Write-Output 'OpenSSH configured'

########## verify
# step: verify
$ErrorActionPreference = 'Stop'
# Check the finished image before sysprep: every artifact in place with the
# checksum it was verified with, and containerd running.
if ((Get-FileHash -Algorithm SHA256 -LiteralPath 'C:\k\downloads\containerd-1.7.24-windows-amd64.tar.gz').Hash -ne 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB') { throw 'verify: containerd at C:\k\downloads\containerd-1.7.24-windows-amd64.tar.gz does not have the expected checksum' }
if ((Get-FileHash -Algorithm SHA256 -LiteralPath 'C:\k\kubelet.exe').Hash -ne 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB') { throw 'verify: kubelet at C:\k\kubelet.exe does not have the expected checksum' }
if ((Get-FileHash -Algorithm SHA256 -LiteralPath 'C:\k\kube-proxy.exe').Hash -ne 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB') { throw 'verify: kube-proxy at C:\k\kube-proxy.exe does not have the expected checksum' }
if ((Get-FileHash -Algorithm SHA256 -LiteralPath 'C:\k\downloads\cni-plugins-windows-amd64-v1.6.2.zip').Hash -ne 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB') { throw 'verify: cni-plugins at C:\k\downloads\cni-plugins-windows-amd64-v1.6.2.zip does not have the expected checksum' }
if ((Get-FileHash -Algorithm SHA256 -LiteralPath 'C:\k\wins.exe').Hash -ne 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB') { throw 'verify: wins at C:\k\wins.exe does not have the expected checksum' }
if ((Get-Service -Name 'containerd').Status -ne 'Running') { throw 'verify: the containerd service is not running' }
Write-Output 'image verified'

########## windows-build
# step: windows-build
$ErrorActionPreference = 'Stop'
# The real build of the guest, with its update revision (UBR).
$key = 'HKLM:\SOFTWARE\Microsoft\Windows NT\CurrentVersion'
$build = (Get-ItemProperty -Path $key).CurrentBuild
$ubr = (Get-ItemProperty -Path $key).UBR
Write-Output "WINDOWS-BUILD=10.0.$build.$ubr"


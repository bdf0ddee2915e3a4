########## prepare
# step: prepare
$ErrorActionPreference = 'Stop'

New-Item -ItemType Directory -Force -Path 'C:\k' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\k\downloads' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\Program Files\containerd' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\opt\cni\bin' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\etc\cni\net.d' | Out-Null
Write-Output 'directories ready'

########## windows-update-KB5070010
# step: windows-update-KB5070010
$ErrorActionPreference = 'Stop'
# Download one update package, verify its SHA-256, install it (.cab with DISM,
# .msu with wusa.exe) and restart when it needs one. Every value is a
# single-quoted literal (psquote).
$kb = 'KB5070010'
$url = 'http://mirror.internal/updates/windows10.0-kb5070010-x64.cab'
$want = 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB'
$file = 'C:\k\downloads\windows10.0-kb5070010-x64.cab'
Invoke-WebRequest -UseBasicParsing -Uri $url -OutFile $file
$got = (Get-FileHash -Algorithm SHA256 -LiteralPath $file).Hash
if ($got -ne $want) {
  Remove-Item -LiteralPath $file -Force
  throw ('checksum mismatch for ' + $kb + ' from ' + $url + ': expected ' + $want + ', got ' + $got)
}
$out = dism.exe /Online /Add-Package ('/PackagePath:' + $file) /Quiet /NoRestart
$code = $LASTEXITCODE
Remove-Item -LiteralPath $file -Force
if ($code -eq 0 -or $code -eq 2359302) {
  Write-Output ($kb + ' installed (exit code ' + $code + ')')
} elseif ($code -eq 3010) {
  Write-Output ($kb + ' installed, restart required (exit code ' + $code + ')')
  Write-Output 'BOOTSTRAP-REBOOT-REQUESTED'
  Restart-Computer -Force
} elseif ($code -eq 1641) {
  Write-Output ($kb + ' installed, restart initiated (exit code ' + $code + ')')
  Write-Output 'BOOTSTRAP-REBOOT-REQUESTED'
} else {
  $log = ''
  if (Test-Path -LiteralPath 'C:\Windows\Logs\CBS\CBS.log') {
    $log = (Get-Content -LiteralPath 'C:\Windows\Logs\CBS\CBS.log' | Select-Object -Last 8) -join "`r`n"
  }
  throw ('update ' + $kb + ' failed: exit code ' + $code + ' (0x' + ('{0:X8}' -f $code) + ')' + "`r`n" + ($out -join "`r`n") + "`r`nCBS.log:`r`n" + $log)
}

########## windows-update-KB5070011
# step: windows-update-KB5070011
$ErrorActionPreference = 'Stop'
# Download one update package, verify its SHA-256, install it (.cab with DISM,
# .msu with wusa.exe) and restart when it needs one. Every value is a
# single-quoted literal (psquote).
$kb = 'KB5070011'
$url = 'http://mirror.internal/updates/windows10.0-kb5070011-x64.msu'
$want = 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB'
$file = 'C:\k\downloads\windows10.0-kb5070011-x64.msu'
Invoke-WebRequest -UseBasicParsing -Uri $url -OutFile $file
$got = (Get-FileHash -Algorithm SHA256 -LiteralPath $file).Hash
if ($got -ne $want) {
  Remove-Item -LiteralPath $file -Force
  throw ('checksum mismatch for ' + $kb + ' from ' + $url + ': expected ' + $want + ', got ' + $got)
}
$out = wusa.exe $file /quiet /norestart
$code = $LASTEXITCODE
Remove-Item -LiteralPath $file -Force
if ($code -eq 0 -or $code -eq 2359302) {
  Write-Output ($kb + ' installed (exit code ' + $code + ')')
} elseif ($code -eq 3010) {
  Write-Output ($kb + ' installed, restart required (exit code ' + $code + ')')
  Write-Output 'BOOTSTRAP-REBOOT-REQUESTED'
  Restart-Computer -Force
} elseif ($code -eq 1641) {
  Write-Output ($kb + ' installed, restart initiated (exit code ' + $code + ')')
  Write-Output 'BOOTSTRAP-REBOOT-REQUESTED'
} else {
  $log = ''
  if (Test-Path -LiteralPath 'C:\Windows\Logs\CBS\CBS.log') {
    $log = (Get-Content -LiteralPath 'C:\Windows\Logs\CBS\CBS.log' | Select-Object -Last 8) -join "`r`n"
  }
  throw ('update ' + $kb + ' failed: exit code ' + $code + ' (0x' + ('{0:X8}' -f $code) + ')' + "`r`n" + ($out -join "`r`n") + "`r`nCBS.log:`r`n" + $log)
}

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
# Download the artifact, verify its SHA-256, and only then put it in place.
# Every value is a single-quoted literal (psquote): none is written into a
# comment, a double-quoted string or a bare word.
$name = 'containerd'
$url = 'https://github.com/containerd/containerd/releases/download/v2.2.7/containerd-2.2.7-windows-amd64.tar.gz'
$want = 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB'
$target = 'C:\k\downloads\containerd-2.2.7-windows-amd64.tar.gz'
if ((Test-Path -LiteralPath $target) -and ((Get-FileHash -Algorithm SHA256 -LiteralPath $target).Hash -eq $want)) {
  Write-Output ($name + ' already installed: ' + $target)
} else {
  $download = 'C:\k\downloads\containerd-2.2.7-windows-amd64.tar.gz.download'
  Invoke-WebRequest -UseBasicParsing -Uri $url -OutFile $download
  $got = (Get-FileHash -Algorithm SHA256 -LiteralPath $download).Hash
  if ($got -ne $want) {
    Remove-Item -LiteralPath $download -Force
    throw ('checksum mismatch for ' + $name + ' from ' + $url + ': expected ' + $want + ', got ' + $got)
  }
  Move-Item -LiteralPath $download -Destination $target -Force
  New-Item -ItemType Directory -Force -Path 'C:\Program Files\containerd' | Out-Null
  # tar.exe is a native program: PowerShell 5.1 does not stop when it fails.
  $out = tar.exe -xzf $target -C 'C:\Program Files\containerd'
  if ($LASTEXITCODE) { throw ('tar.exe could not unpack ' + $target + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
  Write-Output ($name + ' installed: ' + $target)
}

########## install-kubelet
# step: install-kubelet
$ErrorActionPreference = 'Stop'
# Download the artifact, verify its SHA-256, and only then put it in place.
# Every value is a single-quoted literal (psquote): none is written into a
# comment, a double-quoted string or a bare word.
$name = 'kubelet'
$url = 'https://dl.k8s.io/release/v1.36.3/bin/windows/amd64/kubelet.exe'
$want = 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB'
$target = 'C:\k\kubelet.exe'
if ((Test-Path -LiteralPath $target) -and ((Get-FileHash -Algorithm SHA256 -LiteralPath $target).Hash -eq $want)) {
  Write-Output ($name + ' already installed: ' + $target)
} else {
  $download = 'C:\k\kubelet.exe.download'
  Invoke-WebRequest -UseBasicParsing -Uri $url -OutFile $download
  $got = (Get-FileHash -Algorithm SHA256 -LiteralPath $download).Hash
  if ($got -ne $want) {
    Remove-Item -LiteralPath $download -Force
    throw ('checksum mismatch for ' + $name + ' from ' + $url + ': expected ' + $want + ', got ' + $got)
  }
  Move-Item -LiteralPath $download -Destination $target -Force
  Write-Output ($name + ' installed: ' + $target)
}

########## install-kube-proxy
# step: install-kube-proxy
$ErrorActionPreference = 'Stop'
# Download the artifact, verify its SHA-256, and only then put it in place.
# Every value is a single-quoted literal (psquote): none is written into a
# comment, a double-quoted string or a bare word.
$name = 'kube-proxy'
$url = 'http://artifacts.internal:8080/k8s/v1.36.3/bin/windows/amd64/kube-proxy.exe'
$want = 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB'
$target = 'C:\k\kube-proxy.exe'
if ((Test-Path -LiteralPath $target) -and ((Get-FileHash -Algorithm SHA256 -LiteralPath $target).Hash -eq $want)) {
  Write-Output ($name + ' already installed: ' + $target)
} else {
  $download = 'C:\k\kube-proxy.exe.download'
  Invoke-WebRequest -UseBasicParsing -Uri $url -OutFile $download
  $got = (Get-FileHash -Algorithm SHA256 -LiteralPath $download).Hash
  if ($got -ne $want) {
    Remove-Item -LiteralPath $download -Force
    throw ('checksum mismatch for ' + $name + ' from ' + $url + ': expected ' + $want + ', got ' + $got)
  }
  Move-Item -LiteralPath $download -Destination $target -Force
  Write-Output ($name + ' installed: ' + $target)
}

########## install-kube-log-runner
# step: install-kube-log-runner
$ErrorActionPreference = 'Stop'
# Download the artifact, verify its SHA-256, and only then put it in place.
# Every value is a single-quoted literal (psquote): none is written into a
# comment, a double-quoted string or a bare word.
$name = 'kube-log-runner'
$url = 'https://dl.k8s.io/release/v1.36.3/bin/windows/amd64/kube-log-runner.exe'
$want = 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB'
$target = 'C:\k\kube-log-runner.exe'
if ((Test-Path -LiteralPath $target) -and ((Get-FileHash -Algorithm SHA256 -LiteralPath $target).Hash -eq $want)) {
  Write-Output ($name + ' already installed: ' + $target)
} else {
  $download = 'C:\k\kube-log-runner.exe.download'
  Invoke-WebRequest -UseBasicParsing -Uri $url -OutFile $download
  $got = (Get-FileHash -Algorithm SHA256 -LiteralPath $download).Hash
  if ($got -ne $want) {
    Remove-Item -LiteralPath $download -Force
    throw ('checksum mismatch for ' + $name + ' from ' + $url + ': expected ' + $want + ', got ' + $got)
  }
  Move-Item -LiteralPath $download -Destination $target -Force
  Write-Output ($name + ' installed: ' + $target)
}

########## install-cni-plugins
# step: install-cni-plugins
$ErrorActionPreference = 'Stop'
# Download the artifact, verify its SHA-256, and only then put it in place.
# Every value is a single-quoted literal (psquote): none is written into a
# comment, a double-quoted string or a bare word.
$name = 'cni-plugins'
$url = 'https://example.com/cni-plugins-windows-amd64-v1.9.1.tgz'
$want = 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB'
$target = 'C:\k\downloads\cni-plugins-windows-amd64-v1.9.1.tgz'
if ((Test-Path -LiteralPath $target) -and ((Get-FileHash -Algorithm SHA256 -LiteralPath $target).Hash -eq $want)) {
  Write-Output ($name + ' already installed: ' + $target)
} else {
  $download = 'C:\k\downloads\cni-plugins-windows-amd64-v1.9.1.tgz.download'
  Invoke-WebRequest -UseBasicParsing -Uri $url -OutFile $download
  $got = (Get-FileHash -Algorithm SHA256 -LiteralPath $download).Hash
  if ($got -ne $want) {
    Remove-Item -LiteralPath $download -Force
    throw ('checksum mismatch for ' + $name + ' from ' + $url + ': expected ' + $want + ', got ' + $got)
  }
  Move-Item -LiteralPath $download -Destination $target -Force
  New-Item -ItemType Directory -Force -Path 'C:\opt\cni\bin' | Out-Null
  # tar.exe is a native program: PowerShell 5.1 does not stop when it fails.
  $out = tar.exe -xzf $target -C 'C:\opt\cni\bin'
  if ($LASTEXITCODE) { throw ('tar.exe could not unpack ' + $target + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
  Write-Output ($name + ' installed: ' + $target)
}

########## install-flanneld
# step: install-flanneld
$ErrorActionPreference = 'Stop'
# Download the artifact, verify its SHA-256, and only then put it in place.
# Every value is a single-quoted literal (psquote): none is written into a
# comment, a double-quoted string or a bare word.
$name = 'flanneld'
$url = 'https://github.com/flannel-io/flannel/releases/download/v0.28.9/flanneld.exe'
$want = 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB'
$target = 'C:\k\flanneld.exe'
if ((Test-Path -LiteralPath $target) -and ((Get-FileHash -Algorithm SHA256 -LiteralPath $target).Hash -eq $want)) {
  Write-Output ($name + ' already installed: ' + $target)
} else {
  $download = 'C:\k\flanneld.exe.download'
  Invoke-WebRequest -UseBasicParsing -Uri $url -OutFile $download
  $got = (Get-FileHash -Algorithm SHA256 -LiteralPath $download).Hash
  if ($got -ne $want) {
    Remove-Item -LiteralPath $download -Force
    throw ('checksum mismatch for ' + $name + ' from ' + $url + ': expected ' + $want + ', got ' + $got)
  }
  Move-Item -LiteralPath $download -Destination $target -Force
  Write-Output ($name + ' installed: ' + $target)
}

########## install-flannel-cni-plugin
# step: install-flannel-cni-plugin
$ErrorActionPreference = 'Stop'
# Download the artifact, verify its SHA-256, and only then put it in place.
# Every value is a single-quoted literal (psquote): none is written into a
# comment, a double-quoted string or a bare word.
$name = 'flannel-cni-plugin'
$url = 'https://github.com/flannel-io/cni-plugin/releases/download/v1.9.1-flannel1/cni-plugin-flannel-windows-amd64-v1.9.1-flannel1.tgz'
$want = 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB'
$target = 'C:\k\downloads\cni-plugin-flannel-windows-amd64-v1.9.1-flannel1.tgz'
if ((Test-Path -LiteralPath $target) -and ((Get-FileHash -Algorithm SHA256 -LiteralPath $target).Hash -eq $want)) {
  Write-Output ($name + ' already installed: ' + $target)
} else {
  $download = 'C:\k\downloads\cni-plugin-flannel-windows-amd64-v1.9.1-flannel1.tgz.download'
  Invoke-WebRequest -UseBasicParsing -Uri $url -OutFile $download
  $got = (Get-FileHash -Algorithm SHA256 -LiteralPath $download).Hash
  if ($got -ne $want) {
    Remove-Item -LiteralPath $download -Force
    throw ('checksum mismatch for ' + $name + ' from ' + $url + ': expected ' + $want + ', got ' + $got)
  }
  Move-Item -LiteralPath $download -Destination $target -Force
  New-Item -ItemType Directory -Force -Path 'C:\opt\cni\bin' | Out-Null
  # tar.exe is a native program: PowerShell 5.1 does not stop when it fails.
  $out = tar.exe -xzf $target -C 'C:\opt\cni\bin'
  if ($LASTEXITCODE) { throw ('tar.exe could not unpack ' + $target + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
  Move-Item -LiteralPath 'C:\opt\cni\bin\flannel-amd64.exe' -Destination 'C:\opt\cni\bin\flannel.exe' -Force
  Write-Output ($name + ' installed: ' + $target)
}

########## install-wins
# step: install-wins
$ErrorActionPreference = 'Stop'
# Download the artifact, verify its SHA-256, and only then put it in place.
# Every value is a single-quoted literal (psquote): none is written into a
# comment, a double-quoted string or a bare word.
$name = 'wins'
$url = 'https://example.com/wins.exe'
$want = 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB'
$target = 'C:\k\wins.exe'
if ((Test-Path -LiteralPath $target) -and ((Get-FileHash -Algorithm SHA256 -LiteralPath $target).Hash -eq $want)) {
  Write-Output ($name + ' already installed: ' + $target)
} else {
  $download = 'C:\k\wins.exe.download'
  Invoke-WebRequest -UseBasicParsing -Uri $url -OutFile $download
  $got = (Get-FileHash -Algorithm SHA256 -LiteralPath $download).Hash
  if ($got -ne $want) {
    Remove-Item -LiteralPath $download -Force
    throw ('checksum mismatch for ' + $name + ' from ' + $url + ': expected ' + $want + ', got ' + $got)
  }
  Move-Item -LiteralPath $download -Destination $target -Force
  Write-Output ($name + ' installed: ' + $target)
}

########## containerd-service
# step: containerd-service
$ErrorActionPreference = 'Stop'
# containerd as a Windows service, with the pause image and CNI directories:
# containerd registers itself (--register-service: automatic start, its own
# recovery actions, and the --config it was given kept in the service's
# command line; containerd cmd/containerd/command/service_windows.go). A
# native program's stderr is left alone: redirected under
# $ErrorActionPreference = 'Stop', Windows PowerShell 5.1 turns its first
# line into a terminating error before the exit code can be read.
Set-Content -Path 'C:\Program Files\containerd\config.toml' -Value 'version = 3
[plugins.''io.containerd.cri.v1.images''.pinned_images]
  sandbox = ''registry.k8s.io/pause:3.10.1''
[plugins.''io.containerd.cri.v1.runtime''.cni]
  bin_dirs = [''C:\opt\cni\bin'']
  conf_dir = ''C:\etc\cni\net.d''
' -NoNewline
if (-not (Get-Service -Name 'containerd' -ErrorAction SilentlyContinue)) {
  $out = & 'C:\Program Files\containerd\bin\containerd.exe' --register-service --config 'C:\Program Files\containerd\config.toml'
  if ($LASTEXITCODE) { throw ('containerd --register-service failed with exit code ' + $LASTEXITCODE + ': ' + $out) }
}
Start-Service -Name 'containerd'
Write-Output ('containerd ' + (Get-Service -Name 'containerd').Status)

########## prepull-images
# step: prepull-images
$ErrorActionPreference = 'Stop'
# Pull the images every node needs (the pause image, the HostProcess base
# image of the node agents), so the first pods start without waiting and
# air-gapped sites need only a registry mirror at build time.
$out = & 'C:\Program Files\containerd\bin\ctr.exe' -n k8s.io images pull 'mcr.microsoft.com/oss/kubernetes/windows-host-process-containers-base-image:v1.0.0'
if ($LASTEXITCODE) { throw ('ctr.exe could not pull ' + 'mcr.microsoft.com/oss/kubernetes/windows-host-process-containers-base-image:v1.0.0' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
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
$out = icacls.exe 'C:\ProgramData\ssh\administrators_authorized_keys' /inheritance:r /grant 'Administrators:F' /grant 'SYSTEM:F'
if ($LASTEXITCODE) { throw ('icacls.exe could not restrict administrators_authorized_keys (exit code ' + $LASTEXITCODE + '): ' + $out) }
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
if ((Get-FileHash -Algorithm SHA256 -LiteralPath 'C:\k\downloads\containerd-2.2.7-windows-amd64.tar.gz').Hash -ne 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB') { throw ('verify: containerd at C:\k\downloads\containerd-2.2.7-windows-amd64.tar.gz does not have the expected checksum') }
if ((Get-FileHash -Algorithm SHA256 -LiteralPath 'C:\k\kubelet.exe').Hash -ne 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB') { throw ('verify: kubelet at C:\k\kubelet.exe does not have the expected checksum') }
if ((Get-FileHash -Algorithm SHA256 -LiteralPath 'C:\k\kube-proxy.exe').Hash -ne 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB') { throw ('verify: kube-proxy at C:\k\kube-proxy.exe does not have the expected checksum') }
if ((Get-FileHash -Algorithm SHA256 -LiteralPath 'C:\k\kube-log-runner.exe').Hash -ne 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB') { throw ('verify: kube-log-runner at C:\k\kube-log-runner.exe does not have the expected checksum') }
if ((Get-FileHash -Algorithm SHA256 -LiteralPath 'C:\k\downloads\cni-plugins-windows-amd64-v1.9.1.tgz').Hash -ne 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB') { throw ('verify: cni-plugins at C:\k\downloads\cni-plugins-windows-amd64-v1.9.1.tgz does not have the expected checksum') }
if ((Get-FileHash -Algorithm SHA256 -LiteralPath 'C:\k\flanneld.exe').Hash -ne 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB') { throw ('verify: flanneld at C:\k\flanneld.exe does not have the expected checksum') }
if ((Get-FileHash -Algorithm SHA256 -LiteralPath 'C:\k\downloads\cni-plugin-flannel-windows-amd64-v1.9.1-flannel1.tgz').Hash -ne 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB') { throw ('verify: flannel-cni-plugin at C:\k\downloads\cni-plugin-flannel-windows-amd64-v1.9.1-flannel1.tgz does not have the expected checksum') }
if (-not (Test-Path -Path 'C:\opt\cni\bin\flannel.exe' -PathType Leaf)) { throw ('verify: flannel-cni-plugin did not install C:\opt\cni\bin\flannel.exe (is flannel-amd64.exe in the archive?)') }
if ((Get-FileHash -Algorithm SHA256 -LiteralPath 'C:\k\wins.exe').Hash -ne 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB') { throw ('verify: wins at C:\k\wins.exe does not have the expected checksum') }
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


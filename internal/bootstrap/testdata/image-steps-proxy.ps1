########## prepare
# step: prepare
$ErrorActionPreference = 'Stop'

New-Item -ItemType Directory -Force -Path 'C:\k' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\k\downloads' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\Program Files\containerd' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\opt\cni\bin' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\etc\cni\net.d' | Out-Null
Write-Output 'directories ready'

########## agent-dirs
# step: agent-dirs
$ErrorActionPreference = 'Stop'
# The directories the node's LocalSystem agents read and write, created at
# image build, owned by Administrators, with a protected DACL that only
# LocalSystem and Administrators hold (bootstrap.AgentDirsStep): the
# well-known SIDs S-1-5-18 and S-1-5-32-544, whatever the system's language.
New-Item -ItemType Directory -Force -Path 'C:\k' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\k\downloads' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\k\pki' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\var\lib\kubelet' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\var\log\kubelet' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\var\log\pods' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\var\log\containers' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\etc\cni\net.d' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\opt\cni\bin' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\var\lib\kube-proxy-windows-calico' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\var\lib\calico-node-windows' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\var\lib\calico' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\CalicoWindows' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\var\lib\kube-proxy-windows' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\var\lib\kube-flannel-windows' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\etc\kube-flannel' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\run\flannel' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\sourcevip' | Out-Null
$out = icacls.exe 'C:\k' /setowner '*S-1-5-32-544' /t /c /q
if ($LASTEXITCODE) { throw ('icacls.exe could not make Administrators the owner of ' + 'C:\k' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\k' /reset /t /c /q
if ($LASTEXITCODE) { throw ('icacls.exe could not reset the ACLs beneath ' + 'C:\k' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\k' /inheritance:r /grant:r '*S-1-5-18:(OI)(CI)F' '*S-1-5-32-544:(OI)(CI)F' /q
if ($LASTEXITCODE) { throw ('icacls.exe could not restrict ' + 'C:\k' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\var' /setowner '*S-1-5-32-544' /t /c /q
if ($LASTEXITCODE) { throw ('icacls.exe could not make Administrators the owner of ' + 'C:\var' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\var' /reset /t /c /q
if ($LASTEXITCODE) { throw ('icacls.exe could not reset the ACLs beneath ' + 'C:\var' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\var' /inheritance:r /grant:r '*S-1-5-18:(OI)(CI)F' '*S-1-5-32-544:(OI)(CI)F' /q
if ($LASTEXITCODE) { throw ('icacls.exe could not restrict ' + 'C:\var' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\etc' /setowner '*S-1-5-32-544' /t /c /q
if ($LASTEXITCODE) { throw ('icacls.exe could not make Administrators the owner of ' + 'C:\etc' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\etc' /reset /t /c /q
if ($LASTEXITCODE) { throw ('icacls.exe could not reset the ACLs beneath ' + 'C:\etc' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\etc' /inheritance:r /grant:r '*S-1-5-18:(OI)(CI)F' '*S-1-5-32-544:(OI)(CI)F' /q
if ($LASTEXITCODE) { throw ('icacls.exe could not restrict ' + 'C:\etc' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\run' /setowner '*S-1-5-32-544' /t /c /q
if ($LASTEXITCODE) { throw ('icacls.exe could not make Administrators the owner of ' + 'C:\run' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\run' /reset /t /c /q
if ($LASTEXITCODE) { throw ('icacls.exe could not reset the ACLs beneath ' + 'C:\run' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\run' /inheritance:r /grant:r '*S-1-5-18:(OI)(CI)F' '*S-1-5-32-544:(OI)(CI)F' /q
if ($LASTEXITCODE) { throw ('icacls.exe could not restrict ' + 'C:\run' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\opt' /setowner '*S-1-5-32-544' /t /c /q
if ($LASTEXITCODE) { throw ('icacls.exe could not make Administrators the owner of ' + 'C:\opt' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\opt' /reset /t /c /q
if ($LASTEXITCODE) { throw ('icacls.exe could not reset the ACLs beneath ' + 'C:\opt' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\opt' /inheritance:r /grant:r '*S-1-5-18:(OI)(CI)F' '*S-1-5-32-544:(OI)(CI)F' /q
if ($LASTEXITCODE) { throw ('icacls.exe could not restrict ' + 'C:\opt' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\CalicoWindows' /setowner '*S-1-5-32-544' /t /c /q
if ($LASTEXITCODE) { throw ('icacls.exe could not make Administrators the owner of ' + 'C:\CalicoWindows' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\CalicoWindows' /reset /t /c /q
if ($LASTEXITCODE) { throw ('icacls.exe could not reset the ACLs beneath ' + 'C:\CalicoWindows' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\CalicoWindows' /inheritance:r /grant:r '*S-1-5-18:(OI)(CI)F' '*S-1-5-32-544:(OI)(CI)F' /q
if ($LASTEXITCODE) { throw ('icacls.exe could not restrict ' + 'C:\CalicoWindows' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\sourcevip' /setowner '*S-1-5-32-544' /t /c /q
if ($LASTEXITCODE) { throw ('icacls.exe could not make Administrators the owner of ' + 'C:\sourcevip' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\sourcevip' /reset /t /c /q
if ($LASTEXITCODE) { throw ('icacls.exe could not reset the ACLs beneath ' + 'C:\sourcevip' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
$out = icacls.exe 'C:\sourcevip' /inheritance:r /grant:r '*S-1-5-18:(OI)(CI)F' '*S-1-5-32-544:(OI)(CI)F' /q
if ($LASTEXITCODE) { throw ('icacls.exe could not restrict ' + 'C:\sourcevip' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
Write-Output 'agent directories protected'

########## winhttp-proxy
# step: winhttp-proxy
$ErrorActionPreference = 'Stop'
# WinHTTP's proxy, which Windows Update's agent and other system services
# use: netsh winhttp set proxy writes it for the whole machine (a second
# run writes the same). netsh is a native program: its exit code is read.
$out = netsh.exe winhttp set proxy ('proxy-server="' + 'http=proxy.example.com:3128;https=proxy.example.com:3128' + '"') ('bypass-list="' + '<local>;wsus.example.com;*.corp.example.com' + '"')
if ($LASTEXITCODE) { throw ('netsh winhttp set proxy failed with exit code ' + $LASTEXITCODE + ': ' + $out) }
Write-Output ('WinHTTP proxy: ' + 'http=proxy.example.com:3128;https=proxy.example.com:3128')

########## windows-update-KB5070010
# step: windows-update-KB5070010
$ErrorActionPreference = 'Stop'
# Download one update package, verify its SHA-256, install it and restart
# when it needs one. A .cab goes through DISM /Online /Add-Package in this
# session. A .msu goes through wusa.exe in a scheduled task as SYSTEM: wusa
# run from a WinRM (or SSH) session installs nothing and exits with 5
# ERROR_ACCESS_DENIED (KB2773898), while DISM takes a .msu on a running
# system only from Windows 11 21H2 (build 22000) on, not on Server 2019 and
# 2022. This step waits for the task's result file with a
# FileSystemWatcher. wusa.exe is a GUI-subsystem program: `& wusa.exe`
# returns at once and leaves $LASTEXITCODE as it was, so the task waits for
# it with Start-Process -Wait and takes -PassThru's ExitCode. Whether the
# package is really installed is read back afterwards (Get-HotFix, the
# windows-updates-installed step). Every value is a single-quoted literal
# (psquote).
$kb = 'KB5070010'
$url = 'https://wsus.example.com/windows10.0-kb5070010-x64.cab'
$want = 'ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB'
$file = 'C:\k\downloads\windows10.0-kb5070010-x64.cab'
# Windows PowerShell 5.1's Invoke-WebRequest goes through the proxy it is
# given (-Proxy), never through HTTP_PROXY; a failed download names its URL
# and how it went, so a site reachable only through a proxy says so.
$via = 'without a proxy (its host is in proxy.no_proxy)'
try {
  Invoke-WebRequest -UseBasicParsing -Uri $url -OutFile $file
} catch {
  throw ('downloading ' + $url + ' ' + $via + ' failed: ' + $_.Exception.Message)
}
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

########## windows-updates-installed
# step: windows-updates-installed
$ErrorActionPreference = 'Stop'
# Read back the updates Windows has installed, after every update package's
# step and the restarts they asked for: an installer's exit code says what
# it reported, not what the servicing stack holds (wusa.exe, a GUI program,
# returns at once from `&` without one). Get-HotFix lists the installed
# updates (Win32_QuickFixEngineering); each line "installed-update <KB>" is
# what the image's installed_updates records, and a package listed in
# windows_updates that is not installed fails the build naming it.
$want = @('KB5070010')
$installed = @(Get-HotFix | ForEach-Object { $_.HotFixID })
foreach ($kb in $installed) { Write-Output ('installed-update ' + $kb) }
$missing = @($want | Where-Object { $installed -notcontains $_ })
if ($missing.Count -gt 0) {
  throw ('update ' + ($missing -join ', ') + ' is not installed: its installer reported success, but Get-HotFix does not list it; see ' + 'C:\Windows\Logs\CBS\CBS.log')
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
  # Windows PowerShell 5.1's Invoke-WebRequest goes through the proxy it is
# given (-Proxy), never through HTTP_PROXY; a failed download names its URL
# and how it went, so a site reachable only through a proxy says so.
$via = 'through the proxy ' + 'http://proxy.example.com:3128'
try {
  Invoke-WebRequest -UseBasicParsing -Uri $url -OutFile $download -Proxy 'http://proxy.example.com:3128'
} catch {
  throw ('downloading ' + $url + ' ' + $via + ' failed: ' + $_.Exception.Message)
}
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
  # Windows PowerShell 5.1's Invoke-WebRequest goes through the proxy it is
# given (-Proxy), never through HTTP_PROXY; a failed download names its URL
# and how it went, so a site reachable only through a proxy says so.
$via = 'through the proxy ' + 'http://proxy.example.com:3128'
try {
  Invoke-WebRequest -UseBasicParsing -Uri $url -OutFile $download -Proxy 'http://proxy.example.com:3128'
} catch {
  throw ('downloading ' + $url + ' ' + $via + ' failed: ' + $_.Exception.Message)
}
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
  # Windows PowerShell 5.1's Invoke-WebRequest goes through the proxy it is
# given (-Proxy), never through HTTP_PROXY; a failed download names its URL
# and how it went, so a site reachable only through a proxy says so.
$via = 'through the proxy ' + 'http://proxy.example.com:3128'
try {
  Invoke-WebRequest -UseBasicParsing -Uri $url -OutFile $download -Proxy 'http://proxy.example.com:3128'
} catch {
  throw ('downloading ' + $url + ' ' + $via + ' failed: ' + $_.Exception.Message)
}
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
  # Windows PowerShell 5.1's Invoke-WebRequest goes through the proxy it is
# given (-Proxy), never through HTTP_PROXY; a failed download names its URL
# and how it went, so a site reachable only through a proxy says so.
$via = 'through the proxy ' + 'http://proxy.example.com:3128'
try {
  Invoke-WebRequest -UseBasicParsing -Uri $url -OutFile $download -Proxy 'http://proxy.example.com:3128'
} catch {
  throw ('downloading ' + $url + ' ' + $via + ' failed: ' + $_.Exception.Message)
}
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
  # Windows PowerShell 5.1's Invoke-WebRequest goes through the proxy it is
# given (-Proxy), never through HTTP_PROXY; a failed download names its URL
# and how it went, so a site reachable only through a proxy says so.
$via = 'through the proxy ' + 'http://proxy.example.com:3128'
try {
  Invoke-WebRequest -UseBasicParsing -Uri $url -OutFile $download -Proxy 'http://proxy.example.com:3128'
} catch {
  throw ('downloading ' + $url + ' ' + $via + ' failed: ' + $_.Exception.Message)
}
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
  sandbox = ''registry.k8s.io/pause:3.10.2@sha256:f548e0e8e3dc1896ca956272154dde3314e8cc4fde0a57577ee9fa1c63f5baf4''
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


########## vmware-tools
# step: vmware-tools
$ErrorActionPreference = 'Stop'
# exclude-nics set empty in tools.conf's [guestinfo] section makes VMware
# Tools report every NIC's address, so the guest IP stays visible in vSphere
# once container networking adds adapters. The rest of the file is kept
# (settings an administrator or an earlier build put there), and a file that
# already says so is left alone: the step is rerunnable.
#
# VMware Tools is not restarted: vmtoolsd reads tools.conf again every
# 5 seconds (open-vm-tools services/vmtoolsd/mainLoop.c, ToolsCoreConfFileCb)
# and its guestinfo plugin applies the reload (guestInfoServer.c,
# GuestInfoServerConfReload). Restarting the VMTools service from here would
# end the guest operation running this very script: vmtoolsd keeps the exit
# codes of the programs it started in its own memory (vixTools.c,
# startedProcessList), and guest operations fail while it is stopped.
$path = 'C:\ProgramData\VMware\VMware Tools\tools.conf'
New-Item -ItemType Directory -Force -Path 'C:\ProgramData\VMware\VMware Tools' | Out-Null
$lines = @()
if (Test-Path -LiteralPath $path) {
  $lines = @(Get-Content -LiteralPath $path)
}
$out = @()
$section = ''
$done = $false
foreach ($line in $lines) {
  $t = $line.Trim()
  if ($t -match '^\[(.+)\]$') {
    if ($section -eq 'guestinfo' -and -not $done) {
      $out += 'exclude-nics='
      $done = $true
    }
    $section = $Matches[1].Trim().ToLowerInvariant()
    $out += $line
    continue
  }
  if ($section -eq 'guestinfo' -and $t -match '^exclude-nics\s*=') {
    if (-not $done) {
      $out += 'exclude-nics='
      $done = $true
    }
    continue
  }
  $out += $line
}
if (-not $done) {
  if ($section -ne 'guestinfo') {
    $out += '[guestinfo]'
  }
  $out += 'exclude-nics='
}
if (($lines -join "`r`n") -ceq ($out -join "`r`n")) {
  Write-Output 'tools.conf already reports every NIC'
} else {
  Set-Content -LiteralPath $path -Value $out
  Write-Output 'tools.conf written (VMware Tools reads it again within seconds)'
}

########## firewall
# step: firewall
$ErrorActionPreference = 'Stop'
# The kubelet's port, TCP 10250, for the API server (logs, exec, port-forward,
# metrics). An image does not know the cluster its nodes join, so the rule is
# made disabled: no address reaches the kubelet until a join scopes the rule to
# that cluster's addresses and enables it (kubelet-firewall).
if (-not (Get-NetFirewallRule -Name 'kubelet-10250' -ErrorAction SilentlyContinue)) {
  New-NetFirewallRule -Name 'kubelet-10250' -DisplayName 'kubelet (TCP 10250)' -Direction Inbound -Protocol TCP -LocalPort 10250 -Action Allow -Enabled False | Out-Null
}
Write-Output 'firewall rule present'

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


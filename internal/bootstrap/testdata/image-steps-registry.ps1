########## registry-hosts
# step: registry-hosts
$ErrorActionPreference = 'Stop'
# containerd's registry hosts (config_path, one hosts.toml per upstream
# registry: containerd docs/hosts.md). With credentials, config.toml is made
# first with a protected DACL, LocalSystem and Administrators only (the
# well-known SIDs S-1-5-18 and S-1-5-32-544), so the credential containerd
# reads from it is no one else's to read; containerd's step then rewrites
# its content, which keeps the DACL.
New-Item -ItemType Directory -Force -Path 'C:\Program Files\containerd\certs.d' | Out-Null
New-Item -ItemType Directory -Force -Path 'C:\Program Files\containerd\certs.d\registry.k8s.io' | Out-Null
Set-Content -Path 'C:\Program Files\containerd\certs.d\registry.k8s.io\hosts.toml' -Value '[host.''https://mirror.example.com:5000'']
  capabilities = ["pull", "resolve"]
' -NoNewline
New-Item -ItemType Directory -Force -Path 'C:\Program Files\containerd\certs.d\mcr.microsoft.com' | Out-Null
Set-Content -Path 'C:\Program Files\containerd\certs.d\mcr.microsoft.com\hosts.toml' -Value 'server = ''https://mcr.microsoft.com''

[host.''https://mirror.example.com:5000'']
  capabilities = ["pull", "resolve"]

[host.''https://backup.example.com'']
  capabilities = ["pull", "resolve"]
' -NoNewline
Set-Content -Path 'C:\Program Files\containerd\config.toml' -Value '' -NoNewline
$out = icacls.exe 'C:\Program Files\containerd\config.toml' /inheritance:r /grant:r '*S-1-5-18:F' '*S-1-5-32-544:F' /q
if ($LASTEXITCODE) { throw ('icacls.exe could not restrict ' + 'C:\Program Files\containerd\config.toml' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
Write-Output 'registry hosts written'

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
[plugins.''io.containerd.cri.v1.images''.registry]
  config_path = ''C:\Program Files\containerd\certs.d''
[plugins.''io.containerd.cri.v1.images''.registry.configs.''mirror.example.com:5000''.auth]
  username = ''puller''
  password = "<redacted>"
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
# air-gapped sites need only a registry mirror at build time. With mirrors,
# ctr reads their hosts.toml (--hosts-dir) and takes the mirror's
# credential on its command line (--user), never from a file.
$out = & 'C:\Program Files\containerd\bin\ctr.exe' -n k8s.io images pull --hosts-dir 'C:\Program Files\containerd\certs.d' --user 'puller:<redacted>' 'mcr.microsoft.com/oss/kubernetes/windows-host-process-containers-base-image:v1.0.0'
if ($LASTEXITCODE) { throw ('ctr.exe could not pull ' + 'mcr.microsoft.com/oss/kubernetes/windows-host-process-containers-base-image:v1.0.0' + ' (exit code ' + $LASTEXITCODE + '): ' + $out) }
Write-Output 'images pulled'


########## sysprep
# step: sysprep
$ErrorActionPreference = 'Stop'
# The time zone by its Windows ID (Set-TimeZone -Id, Windows PowerShell 5.1),
# where the guest has another: a clone's customization sets only what
# sysprep's legacy index can name, and UTC is not among it.
if ((Get-TimeZone).Id -ne 'W. Europe Standard Time') { Set-TimeZone -Id 'W. Europe Standard Time' }
Write-Output ('time zone ' + (Get-TimeZone).Id)
# Generalize the image and power off; vSphere then turns the VM into a template.
# The answer files an earlier Setup or customization left go first (they hold
# the password the source template was installed with), then the OpenSSH host
# keys: each clone's sshd creates its own at first start, instead of every
# node presenting this image's.
if (Test-Path -LiteralPath 'C:\Windows\Panther\unattend.xml') { Remove-Item -LiteralPath 'C:\Windows\Panther\unattend.xml' -Recurse -Force }
if (Test-Path -LiteralPath 'C:\Windows\Panther\Unattend\unattend.xml') { Remove-Item -LiteralPath 'C:\Windows\Panther\Unattend\unattend.xml' -Recurse -Force }
if (Test-Path -LiteralPath 'C:\Windows\Panther\Unattend\autounattend.xml') { Remove-Item -LiteralPath 'C:\Windows\Panther\Unattend\autounattend.xml' -Recurse -Force }
if (Test-Path -LiteralPath 'C:\Windows\System32\Sysprep\unattend.xml') { Remove-Item -LiteralPath 'C:\Windows\System32\Sysprep\unattend.xml' -Recurse -Force }
if (Test-Path -LiteralPath 'C:\sysprep') { Remove-Item -LiteralPath 'C:\sysprep' -Recurse -Force }
if (Test-Path -LiteralPath 'C:\Windows\TEMP\vmware-imc') { Remove-Item -LiteralPath 'C:\Windows\TEMP\vmware-imc' -Recurse -Force }
if (Test-Path -LiteralPath 'C:\ProgramData\ssh\ssh_host_rsa_key') { Remove-Item -LiteralPath 'C:\ProgramData\ssh\ssh_host_rsa_key' -Force }
if (Test-Path -LiteralPath 'C:\ProgramData\ssh\ssh_host_rsa_key.pub') { Remove-Item -LiteralPath 'C:\ProgramData\ssh\ssh_host_rsa_key.pub' -Force }
if (Test-Path -LiteralPath 'C:\ProgramData\ssh\ssh_host_ecdsa_key') { Remove-Item -LiteralPath 'C:\ProgramData\ssh\ssh_host_ecdsa_key' -Force }
if (Test-Path -LiteralPath 'C:\ProgramData\ssh\ssh_host_ecdsa_key.pub') { Remove-Item -LiteralPath 'C:\ProgramData\ssh\ssh_host_ecdsa_key.pub' -Force }
if (Test-Path -LiteralPath 'C:\ProgramData\ssh\ssh_host_ed25519_key') { Remove-Item -LiteralPath 'C:\ProgramData\ssh\ssh_host_ed25519_key' -Force }
if (Test-Path -LiteralPath 'C:\ProgramData\ssh\ssh_host_ed25519_key.pub') { Remove-Item -LiteralPath 'C:\ProgramData\ssh\ssh_host_ed25519_key.pub' -Force }
[IO.File]::WriteAllBytes('C:\Windows\System32\Sysprep\unattend.xml', [Convert]::FromBase64String('PD94bWwgdmVyc2lvbj0iMS4wIiBlbmNvZGluZz0iVVRGLTgiPz4KPHVuYXR0ZW5kIHhtbG5zPSJ1cm46c2NoZW1hcy1taWNyb3NvZnQtY29tOnVuYXR0ZW5kIiB4bWxuczp3Y209Imh0dHA6Ly9zY2hlbWFzLm1pY3Jvc29mdC5jb20vV01JQ29uZmlnLzIwMDIvU3RhdGUiPgogIDxzZXR0aW5ncyBwYXNzPSJnZW5lcmFsaXplIj4KICAgIDxjb21wb25lbnQgbmFtZT0iTWljcm9zb2Z0LVdpbmRvd3MtU2VjdXJpdHktU1BQIiBwcm9jZXNzb3JBcmNoaXRlY3R1cmU9ImFtZDY0IiBwdWJsaWNLZXlUb2tlbj0iMzFiZjM4NTZhZDM2NGUzNSIgbGFuZ3VhZ2U9Im5ldXRyYWwiIHZlcnNpb25TY29wZT0ibm9uU3hTIj4KICAgICAgPFNraXBSZWFybT4xPC9Ta2lwUmVhcm0+CiAgICA8L2NvbXBvbmVudD4KICA8L3NldHRpbmdzPgogIDxzZXR0aW5ncyBwYXNzPSJzcGVjaWFsaXplIj4KICAgIDxjb21wb25lbnQgbmFtZT0iTWljcm9zb2Z0LVdpbmRvd3MtU2hlbGwtU2V0dXAiIHByb2Nlc3NvckFyY2hpdGVjdHVyZT0iYW1kNjQiIHB1YmxpY0tleVRva2VuPSIzMWJmMzg1NmFkMzY0ZTM1IiBsYW5ndWFnZT0ibmV1dHJhbCIgdmVyc2lvblNjb3BlPSJub25TeFMiPgogICAgICA8Q29tcHV0ZXJOYW1lPio8L0NvbXB1dGVyTmFtZT4KICAgICAgPFRpbWVab25lPlcuIEV1cm9wZSBTdGFuZGFyZCBUaW1lPC9UaW1lWm9uZT4KICAgIDwvY29tcG9uZW50PgogIDwvc2V0dGluZ3M+CiAgPHNldHRpbmdzIHBhc3M9Im9vYmVTeXN0ZW0iPgogICAgPGNvbXBvbmVudCBuYW1lPSJNaWNyb3NvZnQtV2luZG93cy1JbnRlcm5hdGlvbmFsLUNvcmUiIHByb2Nlc3NvckFyY2hpdGVjdHVyZT0iYW1kNjQiIHB1YmxpY0tleVRva2VuPSIzMWJmMzg1NmFkMzY0ZTM1IiBsYW5ndWFnZT0ibmV1dHJhbCIgdmVyc2lvblNjb3BlPSJub25TeFMiPgogICAgICA8SW5wdXRMb2NhbGU+ZW4tVVM8L0lucHV0TG9jYWxlPgogICAgICA8U3lzdGVtTG9jYWxlPmVuLVVTPC9TeXN0ZW1Mb2NhbGU+CiAgICAgIDxVSUxhbmd1YWdlPmVuLVVTPC9VSUxhbmd1YWdlPgogICAgICA8VXNlckxvY2FsZT5lbi1VUzwvVXNlckxvY2FsZT4KICAgIDwvY29tcG9uZW50PgogICAgPGNvbXBvbmVudCBuYW1lPSJNaWNyb3NvZnQtV2luZG93cy1TaGVsbC1TZXR1cCIgcHJvY2Vzc29yQXJjaGl0ZWN0dXJlPSJhbWQ2NCIgcHVibGljS2V5VG9rZW49IjMxYmYzODU2YWQzNjRlMzUiIGxhbmd1YWdlPSJuZXV0cmFsIiB2ZXJzaW9uU2NvcGU9Im5vblN4UyI+CiAgICAgIDxPT0JFPgogICAgICAgIDxIaWRlRVVMQVBhZ2U+dHJ1ZTwvSGlkZUVVTEFQYWdlPgogICAgICAgIDxIaWRlT25saW5lQWNjb3VudFNjcmVlbnM+dHJ1ZTwvSGlkZU9ubGluZUFjY291bnRTY3JlZW5zPgogICAgICAgIDxIaWRlV2lyZWxlc3NTZXR1cEluT09CRT50cnVlPC9IaWRlV2lyZWxlc3NTZXR1cEluT09CRT4KICAgICAgICA8UHJvdGVjdFlvdXJQQz4zPC9Qcm90ZWN0WW91clBDPgogICAgICA8L09PQkU+CiAgICAgIDxUaW1lWm9uZT5XLiBFdXJvcGUgU3RhbmRhcmQgVGltZTwvVGltZVpvbmU+CiAgICA8L2NvbXBvbmVudD4KICA8L3NldHRpbmdzPgo8L3VuYXR0ZW5kPgo='))
# sysprep.exe is a GUI-subsystem program: `& sysprep.exe` would return at
# once and leave $LASTEXITCODE as it was, so the step waits for it with
# Start-Process -Wait and checks -PassThru's ExitCode.
$sysprep = Start-Process -FilePath 'C:\Windows\System32\Sysprep\sysprep.exe' -ArgumentList @('/generalize', '/oobe', '/shutdown', '/quiet', '/unattend:C:\Windows\System32\Sysprep\unattend.xml') -Wait -PassThru
if ($sysprep.ExitCode) { throw ('sysprep.exe failed with exit code ' + $sysprep.ExitCode) }
Write-Output 'sysprep started'

########## winrm-https-listener
# step: winrm-https-listener
$ErrorActionPreference = 'Stop'
# The WinRM HTTPS listener of this guest, with a key made here that never
# leaves it (NonExportable): the provider runs this step over an
# authenticated channel (vCenter's guest operations), reads the certificate
# it prints and pins it (remote.Config.CertSHA256). The shape follows
# Packer's "Configuring WinRM in VMware" (New-SelfSignedCertificate in
# Cert:\LocalMachine\My, then a listener bound to its thumbprint), with
# New-WSManInstance's documented form of the listener.
#
# An HTTPS listener that exists already came with the disk, that is from
# the template, with its private key in every clone: it proves nothing,
# and this step refuses it rather than pin it.
$https = @(Get-WSManInstance -ResourceURI winrm/config/Listener -Enumerate | Where-Object { $_.Transport -eq 'HTTPS' })
if ($https.Count -gt 0) {
  throw ('SHARED-TEMPLATE-CERTIFICATE: this guest (' + $env:COMPUTERNAME + ') already has a WinRM HTTPS listener, for ' + $https[0].Hostname +
    ' with the certificate ' + $https[0].CertificateThumbprint + ', which it did not make: it came with the template''s disk, so every clone ' +
    'presents that certificate and holds its private key. Remove the listener and the certificate from the template (Remove-WSManInstance ' +
    '-ResourceURI winrm/config/Listener -SelectorSet @{Address=''*''; Transport=''HTTPS''}; Remove-Item Cert:\LocalMachine\My\' +
    $https[0].CertificateThumbprint + '), then convert it to a template again')
}
$cert = New-SelfSignedCertificate -DnsName $env:COMPUTERNAME, '10.0.0.21' -CertStoreLocation 'Cert:\LocalMachine\My' -KeyExportPolicy NonExportable -FriendlyName 'WinRM HTTPS (terraform-provider-windows)'
# A stock Windows Server admits WinRM over HTTP only; 5986 is opened for
# the listener, on every profile (a fresh clone's network is Public) but to
# the management network's addresses only: the provider's, and whoever the
# site names in transport.management_cidrs.
if (-not (Get-NetFirewallRule -Name 'WinRM-HTTPS-In-TCP-terraform-provider-windows' -ErrorAction SilentlyContinue)) {
  New-NetFirewallRule -Name 'WinRM-HTTPS-In-TCP-terraform-provider-windows' -DisplayName 'Windows Remote Management (HTTPS-In)' -Direction Inbound -Protocol TCP -LocalPort 5986 -Action Allow -Profile Any -RemoteAddress @('10.0.5.0/24', '192.0.2.7') | Out-Null
}
New-WSManInstance -ResourceURI winrm/config/Listener -SelectorSet @{Address='*'; Transport='HTTPS'} -ValueSet @{Hostname=$env:COMPUTERNAME; CertificateThumbprint=$cert.Thumbprint} | Out-Null
Write-Output ('WINRM-CERTIFICATE=' + [Convert]::ToBase64String($cert.RawData))

########## reboot
# step: reboot
$ErrorActionPreference = 'Stop'
# The node is done: restart it once, so that the create counts only when it
# is Ready, its agents run and its network probe passes again from the new
# boot (reboot_after_join).
Write-Output 'BOOTSTRAP-REBOOT-REQUESTED'
Restart-Computer -Force

########## windows-build
# step: windows-build
$ErrorActionPreference = 'Stop'
# The real build of the guest, with its update revision (UBR).
$key = 'HKLM:\SOFTWARE\Microsoft\Windows NT\CurrentVersion'
$build = (Get-ItemProperty -Path $key).CurrentBuild
$ubr = (Get-ItemProperty -Path $key).UBR
Write-Output "WINDOWS-BUILD=10.0.$build.$ubr"

########## probe-evidence
# step: probe-evidence
$ErrorActionPreference = 'Stop'
# A network probe of this node failed: what the host's HNS holds (its
# networks, endpoints and load balancer policy lists, as Get-HnsNetwork,
# Get-HnsEndpoint, Get-HnsPolicyList and hnsdiag show them: microsoft/SDN's
# debug scripts collect the same) and the last lines of the node agents'
# container logs (the kubelet's layout: C:\var\log\pods\<namespace>_<pod>_<uid>\<container>\<restart count>.log).
# Read-only; a part that fails says so and the rest still runs
# (bootstrap.ProbeEvidenceStep).
$ErrorActionPreference = 'Continue'
Write-Output '--- Get-HnsNetwork'
Get-HnsNetwork
Write-Output '--- Get-HnsEndpoint'
Get-HnsEndpoint
Write-Output '--- Get-HnsPolicyList'
Get-HnsPolicyList
Write-Output '--- hnsdiag list all'
hnsdiag.exe list all

########## domain-joined
# step: domain-joined
$ErrorActionPreference = 'Stop'
# The node's customization joined corp.example.test in Windows Setup's specialize
# pass (the vSphere API's CustomizationIdentification, sysprep.xml's
# Microsoft-Windows-UnattendedJoin). A join that fails does not fail Setup:
# vCenter reports the customization succeeded and the computer stays in its
# workgroup (vmware/terraform-provider-vsphere#1350). Windows writes the
# join's outcome to NetSetup.LOG, its last "NetpDoDomainJoin: status:" line
# the Win32 error (0x0 when joined).
$log = 'C:\Windows\debug\NetSetup.LOG'
if (-not (Test-Path -LiteralPath $log -PathType Leaf)) { throw 'no domain join ran on this computer (C:\Windows\debug\NetSetup.LOG is missing): the customization did not ask to join corp.example.test; is vCenter older than the domain join the clone asked for?' }
$status = $null
foreach ($line in (Get-Content -LiteralPath $log)) {
    if ($line -match 'NetpDoDomainJoin: status: (0x[0-9a-fA-F]+)') { $status = $Matches[1] }
}
if ($status -eq '0x0') {
    Write-Output 'joined corp.example.test'
    exit 0
}
# The Win32 errors a join fails with, as Windows words them (Microsoft
# Learn, System Error Codes; lmerr.h for 2224 and 2732), and the setting
# that fixes each.
$why = @{
    '0x52e' = 'The user name or password is incorrect. (ERROR_LOGON_FAILURE, 1326): check the provider''s active_directory.join_user and active_directory.join_password'
    '0x54b' = 'The specified domain either does not exist or could not be contacted. (ERROR_NO_SUCH_DOMAIN, 1355): check active_directory.domain and that the node''s DNS servers resolve the domain''s controllers'
    '0x2' = 'The system cannot find the file specified. (ERROR_FILE_NOT_FOUND, 2: the OU does not exist): check active_directory.ou'
    '0x5' = 'Access is denied. (ERROR_ACCESS_DENIED, 5): the provider''s active_directory.join_user may not create computer objects in the node''s active_directory.ou; delegate it Create Computer objects there'
    '0x8b0' = 'The account already exists. (NERR_UserExists, 2224): a computer account of this node''s name is in another OU than active_directory.ou; move or delete it'
    '0xaac' = 'An account with the same name exists in Active Directory. Re-using the account was blocked by security policy. (NERR_AccountReuseBlockedByPolicy, 2732, KB5020276): another account created this node''s computer account; delete it, or join with the account that created it'
    '0x216d' = 'Your computer could not be joined to the domain. You have exceeded the maximum number of computer accounts you are allowed to create in this domain. (8557): delegate the provider''s active_directory.join_user Create Computer objects on active_directory.ou'
}
$text = $why[$status]
if (-not $text) { $text = "Win32 error $status (net helpmsg explains it)" }
throw ('joining the domain corp.example.test failed: ' + $text + ' (' + $status + ', C:\Windows\debug\NetSetup.LOG)')


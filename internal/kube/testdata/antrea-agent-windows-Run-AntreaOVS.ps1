# Container antrea-ovs of DaemonSet antrea-agent-windows: after
# antrea-io/antrea build/charts/antrea-windows/conf/ovs/Run-AntreaOVS.ps1:
# the OVS database, ovsdb-server serving it on db.sock, then ovs-vswitchd.
# Upstream detaches both daemons and watches them in a loop; here
# ovsdb-server runs as a child and ovs-vswitchd in the foreground, so the
# container ends (and restarts) when ovs-vswitchd does.
$ErrorActionPreference = 'Stop'
$mountPath = $env:CONTAINER_SANDBOX_MOUNT_POINT
$mountPath = ($mountPath.Replace('\', '/')).TrimEnd('/')
$bin = $mountPath + '/openvswitch/usr/bin'
$sbin = $mountPath + '/openvswitch/usr/sbin'
$schema = $mountPath + '/openvswitch/usr/share/openvswitch/vswitch.ovsschema'
$db = 'C:\openvswitch\etc\openvswitch\conf.db'
if (-not (Test-Path -Path $db)) {
    New-Item -ItemType Directory -Force -Path 'C:\openvswitch\etc\openvswitch' | Out-Null
    & ($bin + '/ovsdb-tool.exe') 'create' $db $schema
    if ($LASTEXITCODE -ne 0) { exit $LASTEXITCODE }
}
New-Item -ItemType Directory -Force -Path 'C:\openvswitch\var\run\openvswitch' | Out-Null
Start-Process -FilePath ($sbin + '/ovsdb-server.exe') -ArgumentList $db, '-vfile:info', '--remote=punix:db.sock', '--log-file=/var/log/antrea/openvswitch/ovsdb-server.log', '--pidfile' -NoNewWindow
& ($sbin + '/ovs-vswitchd.exe') '--log-file=/var/log/antrea/openvswitch/ovs-vswitchd.log' '--pidfile' '-vfile:info'
exit $LASTEXITCODE

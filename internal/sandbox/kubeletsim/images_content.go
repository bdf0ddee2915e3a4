package kubeletsim

import (
	_ "embed"
	"strings"

	"github.com/distribution/reference"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// A HostProcess container sees its image's files under its mount, the
// directory CONTAINER_SANDBOX_MOUNT_POINT names (kubernetes.io "Create a
// Windows HostProcess Pod": "the container image contents ... are
// available at $CONTAINER_SANDBOX_MOUNT_POINT"; hcsshim
// internal/jobcontainers). imageContents are the images whose files the
// simulator models, by reference as containerd normalizes it; any other
// image's container gets an empty mount but for its volumes (the
// HostProcess base image, whose containers run the host's programs).
var imageContents = map[string]func() map[string][]byte{
	"docker.io/antrea/antrea-windows:v2.2.0": antreaWindowsImage,
}

//go:embed images/antrea-windows/Install-OVS.ps1
var antreaInstallOVS []byte

// antreaWindowsImage is antrea/antrea-windows:v2.2.0 as
// build/images/Dockerfile.build.windows of antrea-io/antrea v2.2.0 lays it
// out on the HostProcess base image: /k/antrea/bin (antrea-agent, antctl),
// /k/antrea/cni (the antrea plugin and the CNI project's host-local,
// build/images/deps/cni-binaries-version v1.5.1), /k/antrea/Install-OVS.ps1
// (here the reduction in images/antrea-windows, whose header says what it
// leaves out), and /openvswitch from antrea/windows-ovs (Antrea's OVS
// package: usr/bin, usr/sbin, the schema, and the OVSext driver, which
// Antrea ships test-signed: docs/windows.md, "Antrea provides a pre-built
// OVS package which contains a test-signed OVS kernel driver").
func antreaWindowsImage() map[string][]byte {
	const ovs = "3.1.3"
	exe := func(name, version string) []byte {
		return []byte("MZ simulated Windows executable\r\n" + name + " " + version + "\r\n")
	}
	return map[string][]byte{
		`k\antrea\bin\antrea-agent.exe`:                       exe("antrea-agent", "v2.2.0"),
		`k\antrea\bin\antctl.exe`:                             exe("antctl", "v2.2.0"),
		`k\antrea\cni\antrea.exe`:                             exe("antrea-cni", "v2.2.0"),
		`k\antrea\cni\host-local.exe`:                         exe("host-local", "v1.5.1"),
		`k\antrea\Install-OVS.ps1`:                            antreaInstallOVS,
		`openvswitch\usr\bin\ovsdb-tool.exe`:                  exe("ovsdb-tool", ovs),
		`openvswitch\usr\bin\ovs-vsctl.exe`:                   exe("ovs-vsctl", ovs),
		`openvswitch\usr\sbin\ovsdb-server.exe`:               exe("ovsdb-server", ovs),
		`openvswitch\usr\sbin\ovs-vswitchd.exe`:               exe("ovs-vswitchd", ovs),
		`openvswitch\usr\share\openvswitch\vswitch.ovsschema`: []byte(`{"name": "Open_vSwitch"}`),
		`openvswitch\driver\ovsext.inf`:                       []byte("; Open vSwitch Extension\r\n[Version]\r\nSignature=\"$WINDOWS NT$\"\r\nClass=NetService\r\n[Manufacturer]\r\n%OVSExt_Desc%=OVSExt\r\n"),
		`openvswitch\driver\OVSExt.sys`:                       exe("ovsext", ovs),
		`openvswitch\driver\ovsext.cat`:                       winsim.DriverCatalog("Antrea test-signing certificate", true),
	}
}

// imageFiles are the files an image puts under a container's mount; nil
// for an image the simulator does not model.
func imageFiles(image string) map[string][]byte {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return nil
	}
	named = reference.TagNameOnly(named)
	if f := imageContents[strings.ToLower(named.String())]; f != nil {
		return f()
	}
	return nil
}

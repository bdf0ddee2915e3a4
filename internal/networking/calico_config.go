package networking

import (
	"fmt"
	"net/netip"
	"strings"
)

// calico: Calico's VXLAN overlay with Calico IPAM, extended to Windows as
// Calico for Windows runs it: calico-node-windows (calico-node's startup
// and felix, HostProcess) and the calico/calico-ipam CNI plugins, on the
// cluster's own Calico (projectcalico/calico, tigera/operator
// pkg/render/windows.go). Its plan checks read the cluster's Calico
// configuration (CalicoConfig) and refuse what Calico for Windows refuses.

// Calico's resources in the Kubernetes datastore: the CRDs of
// projectcalico/calico manifests/crds.yaml (crd.projectcalico.org/v1), or
// the same kinds served as projectcalico.org/v3 (by the Calico API server
// or, from v3.30 on, as v3 CRDs, manifests/calico-v3-crds.yaml). The
// fields the checks read have the same names in both.
const (
	CalicoCRDGroup   = "crd.projectcalico.org"
	CalicoCRDVersion = "v1"
	CalicoV3Group    = "projectcalico.org"
	CalicoV3Version  = "v3"
	// Resources (plural names): the v1 IPAM configuration is "ipamconfigs",
	// the v3 one "ipamconfigurations".
	CalicoIPPools              = "ippools"
	CalicoIPAMConfigsV1        = "ipamconfigs"
	CalicoIPAMConfigurationsV3 = "ipamconfigurations"
	CalicoFelixConfigurations  = "felixconfigurations"
	// CalicoDefault is the name of the cluster-wide IPAM and Felix
	// configuration objects.
	CalicoDefault = "default"
)

// Calico's defaults when its configuration leaves a setting out:
// felix/config/config_params.go (VXLANPort int;4789, VXLANVNI int;4096);
// libcalico-go/lib/ipam/ipam.go GetIPAMConfig (no IPAMConfig: StrictAffinity
// false, which it then writes as the cluster's); the IPPool CRD's modes
// default to Never (api/pkg/apis/projectcalico/v3/ippool.go).
const (
	calicoDefaultVXLANVNI  = 4096
	calicoDefaultVXLANPort = 4789
	calicoModeNever        = "Never"
	calicoModeAlways       = "Always"
	calicoModeCrossSubnet  = "CrossSubnet"
)

// CalicoPool is one IPPool as the checks read it.
type CalicoPool struct {
	Name      string
	CIDR      string
	VXLANMode string // Never, Always or CrossSubnet ("" reads as Never)
	IPIPMode  string
	Disabled  bool
	BlockSize int
}

// CalicoConfig is the cluster's Calico configuration that decides whether
// Windows nodes can join it.
type CalicoConfig struct {
	// Group is the API group the objects were read from
	// (crd.projectcalico.org or projectcalico.org).
	Group string
	Pools []CalicoPool
	// StrictAffinity is the IPAMConfig's (IPAMConfiguration "default");
	// IPAMConfigFound is false when there is none, which Calico reads as
	// strictAffinity false.
	StrictAffinity  bool
	IPAMConfigFound bool
	// VXLANVNI and VXLANPort are FelixConfiguration default's, with
	// Felix's defaults filled in.
	VXLANVNI, VXLANPort int
}

// WithFelixDefaults fills in Felix's defaults for settings left out (0).
func (c *CalicoConfig) WithFelixDefaults() {
	if c.VXLANVNI == 0 {
		c.VXLANVNI = calicoDefaultVXLANVNI
	}
	if c.VXLANPort == 0 {
		c.VXLANPort = calicoDefaultVXLANPort
	}
}

func (c *CalicoConfig) ipamConfigName() string {
	if c.Group == CalicoV3Group {
		return "IPAMConfiguration " + CalicoDefault
	}
	return "IPAMConfig " + CalicoDefault
}

// ipv4Pools are the enabled IPv4 pools (Calico for Windows is IPv4 only:
// docs.tigera.io, Calico for Windows limitations, "IPv6 and dual stack"
// not supported).
func (c *CalicoConfig) ipv4Pools() []CalicoPool {
	var out []CalicoPool
	for _, p := range c.Pools {
		if pfx, err := netip.ParsePrefix(p.CIDR); err == nil && pfx.Addr().Is4() && !p.Disabled {
			out = append(out, p)
		}
	}
	return out
}

func mode(m string) string {
	if m == "" {
		return calicoModeNever
	}
	return m
}

// checkCalicoPlugin judges the cluster's Calico for Windows nodes, as
// Calico for Windows' requirements and its code have it:
//   - strict affinity: libcalico-go/lib/ipam/ipam.go GetIPAMConfig refuses a
//     Windows host ("global strict affinity should not be false for Windows
//     node") unless the IPAM configuration's strictAffinity is true, and the
//     operator install guide's first step sets it
//     (docs.tigera.io/calico/latest/getting-started/kubernetes/windows-calico/operator);
//   - VXLAN: Calico for Windows' networking is VXLAN or BGP without
//     encapsulation; "IP in IP overlay with BGP routing" and "Cross-subnet
//     support ... for VXLAN" are not supported (windows-calico/limitations).
//     The provider's calico mode runs the vxlan backend only, so an IPv4
//     pool with vxlanMode Always must exist;
//   - VNI and port: calico-node's Windows startup and the CNI plugin refuse
//     a VNI below 4096 ("Windows does not support VXLANVNI < 4096",
//     cni-plugin/pkg/dataplane/windows/dataplane_windows.go), and HNS's
//     overlay listens on UDP 4789 only, as every Windows VXLAN overlay
//     (flannel's vxlan_windows.go: "Port ... is not supported on Windows").
func checkCalicoPlugin(c *CalicoConfig) Verdict {
	var fails, remedies []string
	ipam := c.ipamConfigName()
	if !c.StrictAffinity {
		state := "strictAffinity is false"
		if !c.IPAMConfigFound {
			state = "there is none, which Calico reads as strictAffinity false"
		}
		fails = append(fails, fmt.Sprintf("Calico IPAM's %s: %s. Calico refuses to run on a Windows node unless strictAffinity is true "+
			"(Linux nodes would borrow addresses from a Windows node's block, which Windows cannot route).", ipam, state))
		resource := "ipamconfigs.crd.projectcalico.org"
		if c.Group == CalicoV3Group {
			resource = "ipamconfigurations"
		}
		remedies = append(remedies, fmt.Sprintf(`kubectl patch %s default --type merge --patch='{"spec": {"strictAffinity": true}}'`, resource))
	}
	pools := c.ipv4Pools()
	var vxlan, ipip, crossSubnet []string
	for _, p := range pools {
		switch {
		case mode(p.VXLANMode) == calicoModeAlways:
			vxlan = append(vxlan, p.Name)
		case mode(p.VXLANMode) == calicoModeCrossSubnet:
			crossSubnet = append(crossSubnet, p.Name)
		case mode(p.IPIPMode) != calicoModeNever:
			ipip = append(ipip, fmt.Sprintf("%s (ipipMode %s)", p.Name, p.IPIPMode))
		}
	}
	switch {
	case len(vxlan) > 0:
	case len(pools) == 0:
		fails = append(fails, "Calico has no enabled IPv4 IPPool: Windows pods would get no address (Calico for Windows is IPv4 only).")
		remedies = append(remedies, "create an IPv4 IPPool with vxlanMode: Always and ipipMode: Never")
	case len(ipip) > 0:
		fails = append(fails, fmt.Sprintf("Calico's IPPools use IP-in-IP (%s) and none vxlanMode Always: Calico for Windows does not support IP-in-IP, only VXLAN.",
			strings.Join(ipip, ", ")))
		remedies = append(remedies, fmt.Sprintf("set ipipMode: Never and vxlanMode: Always on IPPool %s (Calico's guide: Migrate from IP-in-IP to VXLAN)", strings.Fields(ipip[0])[0]))
	case len(crossSubnet) > 0:
		fails = append(fails, fmt.Sprintf("Calico's IPPools %s use vxlanMode CrossSubnet, which Calico for Windows does not support.", strings.Join(crossSubnet, ", ")))
		remedies = append(remedies, fmt.Sprintf("set vxlanMode: Always on IPPool %s", crossSubnet[0]))
	default:
		fails = append(fails, fmt.Sprintf("Calico's IPPools (%s) use no encapsulation (vxlanMode Never, ipipMode Never): BGP routing, which this provider's calico mode does not set up on Windows.",
			poolNames(pools)))
		remedies = append(remedies, fmt.Sprintf("set vxlanMode: Always on IPPool %s", pools[0].Name))
	}
	switch {
	case c.VXLANVNI < WindowsVXLANVNI:
		fails = append(fails, fmt.Sprintf("FelixConfiguration default's vxlanVNI is %d: Calico for Windows refuses a VNI below %d.", c.VXLANVNI, WindowsVXLANVNI))
		remedies = append(remedies, fmt.Sprintf(`kubectl patch felixconfiguration default --type merge --patch='{"spec": {"vxlanVNI": %d}}'`, WindowsVXLANVNI))
	case c.VXLANVNI != WindowsVXLANVNI:
		// Calico for Windows accepts a VNI above 4096 (the operator passes
		// Felix's to calico-node-windows as VXLAN_VNI); this provider's
		// calico mode runs 4096, Felix's default, on every Windows node.
		fails = append(fails, fmt.Sprintf("FelixConfiguration default's vxlanVNI is %d: the calico mode's Windows agents run VNI %d (Felix's default), "+
			"so Windows nodes would not reach the Linux nodes' VTEPs.", c.VXLANVNI, WindowsVXLANVNI))
		remedies = append(remedies, fmt.Sprintf(`kubectl patch felixconfiguration default --type merge --patch='{"spec": {"vxlanVNI": %d}}'`, WindowsVXLANVNI))
	}
	if c.VXLANPort != WindowsVXLANPort {
		fails = append(fails, fmt.Sprintf("FelixConfiguration default's vxlanPort is %d: Windows' overlay (HNS) carries VXLAN on UDP port %d only.", c.VXLANPort, WindowsVXLANPort))
		remedies = append(remedies, fmt.Sprintf(`kubectl patch felixconfiguration default --type merge --patch='{"spec": {"vxlanPort": %d}}'`, WindowsVXLANPort))
	}
	if len(fails) > 0 {
		return Verdict{Status: VerdictFail, Message: strings.Join(fails, " "), Remedy: strings.Join(remedies, "; ") + "."}
	}
	return Verdict{Status: VerdictPass,
		Message: fmt.Sprintf("Calico (%s) suits Windows nodes: IPPool %s with vxlanMode Always, %s strictAffinity true, VXLAN VNI %d on port %d.",
			c.Group, strings.Join(vxlan, ", "), ipam, c.VXLANVNI, c.VXLANPort)}
}

func poolNames(pools []CalicoPool) string {
	names := make([]string, len(pools))
	for i, p := range pools {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

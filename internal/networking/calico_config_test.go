package networking

import (
	"regexp"
	"testing"
)

// TestUnitCalicoPluginVerdicts: the plan refuses a Calico that Calico for
// Windows refuses, naming the setting to change, and passes one that suits.
func TestUnitCalicoPluginVerdicts(t *testing.T) {
	vxlanPool := CalicoPool{Name: "default-ipv4-ippool", CIDR: "10.244.0.0/16", VXLANMode: "Always", IPIPMode: "Never", BlockSize: 26}
	good := func() *CalicoConfig {
		c := &CalicoConfig{Group: CalicoCRDGroup, Pools: []CalicoPool{vxlanPool}, StrictAffinity: true, IPAMConfigFound: true}
		c.WithFelixDefaults()
		return c
	}
	cases := []struct {
		name    string
		change  func(*CalicoConfig)
		status  string
		message string
		remedy  string
	}{
		{name: "vxlan with strict affinity", change: func(*CalicoConfig) {}, status: VerdictPass,
			message: `IPPool default-ipv4-ippool with vxlanMode Always, IPAMConfig default strictAffinity true, VXLAN VNI 4096 on port 4789`},
		{name: "ipip only", change: func(c *CalicoConfig) { c.Pools[0].VXLANMode, c.Pools[0].IPIPMode = "Never", "Always" }, status: VerdictFail,
			message: `IP-in-IP \(default-ipv4-ippool \(ipipMode Always\)\).*does not support IP-in-IP`,
			remedy:  `set ipipMode: Never and vxlanMode: Always on IPPool default-ipv4-ippool`},
		{name: "ipip cross subnet, vxlan mode left out", change: func(c *CalicoConfig) { c.Pools[0].VXLANMode, c.Pools[0].IPIPMode = "", "CrossSubnet" },
			status: VerdictFail, message: `ipipMode CrossSubnet`},
		{name: "strict affinity false", change: func(c *CalicoConfig) { c.StrictAffinity = false }, status: VerdictFail,
			message: `IPAMConfig default: strictAffinity is false`,
			remedy:  `kubectl patch ipamconfigs.crd.projectcalico.org default --type merge --patch='\{"spec": \{"strictAffinity": true\}\}'`},
		{name: "no IPAM configuration", change: func(c *CalicoConfig) { c.StrictAffinity, c.IPAMConfigFound = false, false }, status: VerdictFail,
			message: `there is none, which Calico reads as strictAffinity false`},
		{name: "v3 IPAM configuration", change: func(c *CalicoConfig) { c.Group, c.StrictAffinity = CalicoV3Group, false }, status: VerdictFail,
			message: `IPAMConfiguration default: strictAffinity is false`, remedy: `kubectl patch ipamconfigurations default`},
		{name: "cross subnet vxlan", change: func(c *CalicoConfig) { c.Pools[0].VXLANMode = "CrossSubnet" }, status: VerdictFail,
			message: `vxlanMode CrossSubnet`},
		{name: "no encapsulation", change: func(c *CalicoConfig) { c.Pools[0].VXLANMode = "Never" }, status: VerdictFail,
			message: `no encapsulation \(vxlanMode Never, ipipMode Never\)`},
		{name: "vxlan pool disabled", change: func(c *CalicoConfig) { c.Pools[0].Disabled = true }, status: VerdictFail,
			message: `no enabled IPv4 IPPool`},
		{name: "IPv6 pool only", change: func(c *CalicoConfig) { c.Pools[0].CIDR = "fd00::/48" }, status: VerdictFail,
			message: `no enabled IPv4 IPPool`},
		{name: "a second, IP-in-IP pool beside a VXLAN one", change: func(c *CalicoConfig) {
			c.Pools = append(c.Pools, CalicoPool{Name: "ipip", CIDR: "10.250.0.0/16", IPIPMode: "Always"})
		}, status: VerdictPass},
		{name: "VNI below 4096", change: func(c *CalicoConfig) { c.VXLANVNI = 1 }, status: VerdictFail,
			message: `vxlanVNI is 1: Calico for Windows refuses a VNI below 4096`, remedy: `"vxlanVNI": 4096`},
		{name: "VNI above 4096", change: func(c *CalicoConfig) { c.VXLANVNI = 5000 }, status: VerdictFail,
			message: `vxlanVNI is 5000: the calico mode's Windows agents run VNI 4096`, remedy: `"vxlanVNI": 4096`},
		{name: "port not 4789", change: func(c *CalicoConfig) { c.VXLANPort = 8472 }, status: VerdictFail,
			message: `vxlanPort is 8472`, remedy: `"vxlanPort": 4789`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := good()
			tc.change(c)
			v := CheckPlugin(Plugin{Name: PluginCalico, Source: "DaemonSet calico-system/calico-node", Config: c}, nil)
			if v.Status != tc.status || !regexp.MustCompile(tc.message).MatchString(v.Message) || !regexp.MustCompile(tc.remedy).MatchString(v.Remedy) {
				t.Errorf("verdict %+v, want %s matching %q and remedy %q", v, tc.status, tc.message, tc.remedy)
			}
		})
	}
}

// TestUnitCalicoFelixDefaults: a FelixConfiguration that leaves the VXLAN
// settings out means Felix's defaults, which Windows accepts.
func TestUnitCalicoFelixDefaults(t *testing.T) {
	c := &CalicoConfig{}
	c.WithFelixDefaults()
	if c.VXLANVNI != WindowsVXLANVNI || c.VXLANPort != WindowsVXLANPort {
		t.Errorf("Felix defaults VNI %d port %d, want %d and %d", c.VXLANVNI, c.VXLANPort, WindowsVXLANVNI, WindowsVXLANPort)
	}
	c = &CalicoConfig{VXLANVNI: 5000, VXLANPort: 4789}
	c.WithFelixDefaults()
	if c.VXLANVNI != 5000 {
		t.Errorf("a set VNI was replaced: %d", c.VXLANVNI)
	}
}

package winsim

import (
	"encoding/json"
	"strings"
	"sync"
)

// Open vSwitch on a Windows host, as Antrea runs it (antrea-io/antrea
// docs/design/windows-design.md): the OVS kernel driver is the Hyper-V
// switch extension "Open vSwitch Extension" (OVSExt.sys, installed by
// hack/windows/Install-OVS.ps1 with netcfg), enabled on antrea-agent's
// Transparent HNS network antrea-hnsnetwork; ovsdb-server keeps the bridges
// in conf.db and ovs-vswitchd programs the datapath. antrea-agent creates
// the bridge (br-int by default) with its uplink and host ports, and
// AntreaProxy turns Services into OpenFlow groups on it.
//
// The state lives in one file on the host's disk, written by the simulated
// OVS programs and antrea-agent (internal/sandbox/kubeletsim). The driver
// is installed by netcfg (programs_netcfg.go), as the antrea-windows image's
// Install-OVS.ps1 runs it; antrea-agent refuses to start without it.
const OVSStateFile = `C:\ProgramData\winsim\ovs.json`

// OVSState is a host's Open vSwitch.
type OVSState struct {
	// ExtensionInstalled: the OVS kernel driver is installed as the Hyper-V
	// switch extension "Open vSwitch Extension" (netcfg -l ovsext.inf -c s
	// -i OVSExt).
	ExtensionInstalled bool `json:"extensionInstalled"`
	// ExtensionEnabledOn names the HNS network the extension is enabled on
	// (Enable-VMSwitchExtension; antrea-agent's EnableHNSNetworkExtension).
	ExtensionEnabledOn string `json:"extensionEnabledOn,omitempty"`
	// Bridges are the OVS bridges, by name, with their ports.
	Bridges map[string][]string `json:"bridges,omitempty"`
	// ServiceGroups are AntreaProxy's Service flows on the bridge: a
	// ClusterIP (or, with VIP "", the node's NodePort) and protocol/port to
	// the endpoints it load-balances to ("ip:port").
	ServiceGroups []OVSServiceGroup `json:"serviceGroups,omitempty"`
	// Routes are the node route controller's: another Node's pod CIDR to
	// the tunnel port (encap) or that Node's MAC (noEncap).
	Routes map[string]string `json:"routes,omitempty"`
}

// OVSServiceGroup is one Service port as AntreaProxy installs it (an
// OpenFlow group of its endpoints, pkg/agent/proxy).
type OVSServiceGroup struct {
	VIP       string   `json:"vip"` // "" for a NodePort: every address of the node
	Protocol  string   `json:"protocol"`
	Port      int      `json:"port"`
	Endpoints []string `json:"endpoints"`
}

var ovsMu sync.Mutex

// ReadOVS reads a host's Open vSwitch state (empty when nothing wrote it).
func ReadOVS(files HNSFiles) OVSState {
	ovsMu.Lock()
	defer ovsMu.Unlock()
	return readOVS(files)
}

func readOVS(files HNSFiles) OVSState {
	var s OVSState
	if b, err := files.ReadFile(OVSStateFile); err == nil {
		_ = json.Unmarshal(b, &s)
	}
	return s
}

// UpdateOVS changes a host's Open vSwitch state under its lock.
func UpdateOVS(files HNSFiles, change func(*OVSState) error) error {
	ovsMu.Lock()
	defer ovsMu.Unlock()
	s := readOVS(files)
	if err := change(&s); err != nil {
		return err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return files.WriteFile(OVSStateFile, b)
}

// HasBridge reports whether the bridge exists.
func (s OVSState) HasBridge(name string) bool {
	for b := range s.Bridges {
		if strings.EqualFold(b, name) {
			return true
		}
	}
	return false
}

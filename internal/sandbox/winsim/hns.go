package winsim

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/pwsh"
)

// The Host Networking Service's state on a host: its networks (flanneld
// creates them), endpoints (a pod's, kube-proxy's source VIP and remote
// endpoints) and load balancer policy lists (kube-proxy programs them). HNS
// keeps them as JSON objects with GUIDs that reference each other: a policy
// list names its endpoints as "/endpoints/<id>" (microsoft/SDN
// Kubernetes/windows/hns.psm1, get-endpointReferences). Here they live in
// files on the host's disk, one per kind, which the node agents' simulations
// (internal/sandbox/kubeletsim) write and the cmdlets (Get-HnsNetwork,
// Get-HnsEndpoint, Get-HnsPolicyList) and hnsdiag.exe read.
const (
	HNSNetworksFile  = `C:\ProgramData\winsim\hns.json`
	hnsEndpointsFile = `C:\ProgramData\winsim\hns-endpoints.json`
	hnsPoliciesFile  = `C:\ProgramData\winsim\hns-policies.json`
)

// HNSFiles is where HNS keeps its state: *Host, or a test's file system.
type HNSFiles interface {
	ReadFile(path string) ([]byte, error)
	WriteFile(path string, data []byte) error
}

// HNSNetwork is an HNS network (Get-HnsNetwork: ID, Name, Type, Subnets).
type HNSNetwork struct {
	ID            string `json:"ID,omitempty"`
	Name          string `json:"Name"`
	Type          string `json:"Type"` // Overlay, L2Bridge
	AddressPrefix string `json:"AddressPrefix"`
	VNI           int    `json:"VNI,omitempty"`
	// Policies are the network's policies: Calico's Felix adds a
	// RemoteSubnetRoute per remote node's block to its VXLAN network
	// (felix/dataplane/windows/vxlan_mgr.go).
	Policies []HNSNetworkPolicy `json:"Policies,omitempty"`
}

// HNSNetworkPolicy is a network policy; only RemoteSubnetRoute (hcn's
// RemoteSubnetRoutePolicySetting: the destination prefix routed over VXLAN
// to a remote VTEP) is modelled.
type HNSNetworkPolicy struct {
	Type                        string `json:"Type"`
	DestinationPrefix           string `json:"DestinationPrefix"`
	IsolationID                 int    `json:"IsolationId"`
	DistributedRouterMacAddress string `json:"DistributedRouterMacAddress"`
	ProviderAddress             string `json:"ProviderAddress"`
}

// HNSEndpoint is an HNS endpoint (Get-HnsEndpoint): a local one on this
// host, or a remote one (IsRemoteEndpoint) that winkernel creates on an
// overlay network for another node's address, with that node's provider
// address (PA policy).
type HNSEndpoint struct {
	ID              string `json:"ID"`
	Name            string `json:"Name,omitempty"`
	Network         string `json:"VirtualNetworkName"`
	IP              string `json:"IPAddress"`
	MAC             string `json:"MacAddress,omitempty"`
	Remote          bool   `json:"IsRemoteEndpoint,omitempty"`
	ProviderAddress string `json:"ProviderAddress,omitempty"`
}

// HNSLoadBalancer is one load balancer policy list (Get-HnsPolicyList: an
// ELB policy and its References): the frontend (VIPs, empty for every
// address of the host, as winkernel programs a NodePort), the ports, the
// source VIP and flags, and the endpoints it sends to, by ID.
type HNSLoadBalancer struct {
	ID             string   `json:"ID"`
	VIP            string   `json:"VIP"`
	Protocol       string   `json:"Protocol"` // TCP, UDP
	ExternalPort   int      `json:"ExternalPort"`
	InternalPort   int      `json:"InternalPort"`
	SourceVIP      string   `json:"SourceVIP"`
	DSR            bool     `json:"DSR"`
	LocalRoutedVIP bool     `json:"LocalRoutedVIP"`
	Endpoints      []string `json:"References"` // endpoint IDs
}

// hnsMu makes each read and change of HNS's state whole, as HNS's own
// service does: a reader never sees a file half written.
var hnsMu sync.Mutex

func readHNSFile[T any](files HNSFiles, path string) []T {
	var out []T
	if b, err := files.ReadFile(path); err == nil {
		_ = json.Unmarshal(b, &out)
	}
	return out
}

func writeHNSFile[T any](files HNSFiles, path string, v []T) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return files.WriteFile(path, b)
}

// HNSNetworks lists the host's HNS networks; one written without an ID
// gets a stable one from its name.
func HNSNetworks(files HNSFiles) []HNSNetwork {
	hnsMu.Lock()
	defer hnsMu.Unlock()
	return hnsNetworks(files)
}

// hnsNetworks is HNSNetworks for a caller holding hnsMu.
func hnsNetworks(files HNSFiles) []HNSNetwork {
	nets := readHNSFile[HNSNetwork](files, HNSNetworksFile)
	for i := range nets {
		if nets[i].ID == "" {
			nets[i].ID = stableGUID("network/" + strings.ToLower(nets[i].Name))
		}
	}
	return nets
}

// ForgetHNS empties HNS's state: networks, endpoints and load balancers, as
// a boot leaves a host whose networks were non-persistent (HNS keeps those in
// memory: hcn.EnableNonPersistent, as flannel creates its overlay network in
// pkg/backend/vxlan/device_windows.go).
func ForgetHNS(files HNSFiles) error {
	hnsMu.Lock()
	defer hnsMu.Unlock()
	for _, path := range []string{HNSNetworksFile, hnsEndpointsFile, hnsPoliciesFile} {
		if err := files.WriteFile(path, []byte("[]")); err != nil {
			return err
		}
	}
	return nil
}

// PutHNSNetwork creates a network, or replaces the one of the same name.
func PutHNSNetwork(files HNSFiles, n HNSNetwork) error {
	hnsMu.Lock()
	defer hnsMu.Unlock()
	out := []HNSNetwork{n}
	for _, o := range readHNSFile[HNSNetwork](files, HNSNetworksFile) {
		if !strings.EqualFold(o.Name, n.Name) {
			out = append(out, o)
		}
	}
	return writeHNSFile(files, HNSNetworksFile, out)
}

// HNSEndpoints lists the host's HNS endpoints.
func HNSEndpoints(files HNSFiles) []HNSEndpoint {
	hnsMu.Lock()
	defer hnsMu.Unlock()
	return readHNSFile[HNSEndpoint](files, hnsEndpointsFile)
}

// CreateHNSEndpoint creates an endpoint on a network that exists, with a new
// ID, as HNS's POST /endpoints does; HNS refuses one on a network it does
// not have.
func CreateHNSEndpoint(files HNSFiles, ep HNSEndpoint) (HNSEndpoint, error) {
	hnsMu.Lock()
	defer hnsMu.Unlock()
	known := false
	for _, n := range hnsNetworks(files) {
		known = known || strings.EqualFold(n.Name, ep.Network)
	}
	if !known {
		return HNSEndpoint{}, fmt.Errorf("hnsCall failed in Win32: The network was not found. (0x803b0006)")
	}
	ep.ID = newGUID()
	eps := append(readHNSFile[HNSEndpoint](files, hnsEndpointsFile), ep)
	return ep, writeHNSFile(files, hnsEndpointsFile, eps)
}

// DeleteHNSEndpoints deletes the endpoints with these IDs.
func DeleteHNSEndpoints(files HNSFiles, ids ...string) error {
	hnsMu.Lock()
	defer hnsMu.Unlock()
	var keep []HNSEndpoint
	for _, e := range readHNSFile[HNSEndpoint](files, hnsEndpointsFile) {
		if !containsFold(ids, e.ID) {
			keep = append(keep, e)
		}
	}
	return writeHNSFile(files, hnsEndpointsFile, keep)
}

// HNSLoadBalancers lists the host's load balancer policy lists.
func HNSLoadBalancers(files HNSFiles) []HNSLoadBalancer {
	hnsMu.Lock()
	defer hnsMu.Unlock()
	return readHNSFile[HNSLoadBalancer](files, hnsPoliciesFile)
}

// CreateHNSLoadBalancer adds a load balancer with a new ID. HNS refuses one
// whose frontend (VIP, protocol, external port) another already has
// (winkernel looks an existing one up before it creates: getLoadBalancer).
func CreateHNSLoadBalancer(files HNSFiles, lb HNSLoadBalancer) (HNSLoadBalancer, error) {
	hnsMu.Lock()
	defer hnsMu.Unlock()
	lbs := readHNSFile[HNSLoadBalancer](files, hnsPoliciesFile)
	for _, o := range lbs {
		if o.VIP == lb.VIP && o.Protocol == lb.Protocol && o.ExternalPort == lb.ExternalPort {
			return HNSLoadBalancer{}, fmt.Errorf("hnsCall failed in Win32: The specified port already exists. (0x803b0013)")
		}
	}
	lb.ID = newGUID()
	return lb, writeHNSFile(files, hnsPoliciesFile, append(lbs, lb))
}

// DeleteHNSLoadBalancers deletes the load balancers with these IDs; with no
// IDs, every one (winkernel's deleteAllHnsLoadBalancerPolicy).
func DeleteHNSLoadBalancers(files HNSFiles, ids ...string) error {
	hnsMu.Lock()
	defer hnsMu.Unlock()
	var keep []HNSLoadBalancer
	if len(ids) > 0 {
		for _, lb := range readHNSFile[HNSLoadBalancer](files, hnsPoliciesFile) {
			if !containsFold(ids, lb.ID) {
				keep = append(keep, lb)
			}
		}
	}
	return writeHNSFile(files, hnsPoliciesFile, keep)
}

// ReplaceHNSLoadBalancerReferences points a load balancer at other endpoint
// IDs (a test's fault: a stale load balancer).
func ReplaceHNSLoadBalancerReferences(files HNSFiles, id string, endpoints []string) error {
	hnsMu.Lock()
	defer hnsMu.Unlock()
	lbs := readHNSFile[HNSLoadBalancer](files, hnsPoliciesFile)
	for i := range lbs {
		if strings.EqualFold(lbs[i].ID, id) {
			lbs[i].Endpoints = endpoints
			return writeHNSFile(files, hnsPoliciesFile, lbs)
		}
	}
	return fmt.Errorf("no load balancer %s", id)
}

func init() { registerProgram("hnsdiag.exe", SubsystemConsole, runHnsdiag) }

// stableGUID is a GUID-shaped identifier derived from s.
func stableGUID(s string) string {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	x := fmt.Sprintf("%016x%016x", h, ^h)
	return strings.ToUpper(x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32])
}

// hnsObjects are the cmdlets' objects: the JSON HNS's v1 API returns
// (hns.psm1's Invoke-HnsRequest hands it to ConvertFrom-Json), so
// PSCustomObjects with HNS's property names.
func hnsNetworkObject(n HNSNetwork, hostIP string) *pwsh.Object {
	subnet := NewObject("System.Management.Automation.PSCustomObject").Set("AddressPrefix", n.AddressPrefix)
	o := NewObject("System.Management.Automation.PSCustomObject").Set("ID", n.ID).Set("Name", n.Name).Set("Type", n.Type).
		Set("Subnets", []any{subnet}).Set("ManagementIP", hostIP)
	if n.VNI != 0 {
		subnet.Set("Policies", []any{NewObject("System.Management.Automation.PSCustomObject").Set("Type", "VSID").Set("VSID", n.VNI)})
	}
	if len(n.Policies) > 0 {
		var pols []any
		for _, p := range n.Policies {
			pols = append(pols, NewObject("System.Management.Automation.PSCustomObject").Set("Type", p.Type).
				Set("DestinationPrefix", p.DestinationPrefix).Set("IsolationId", p.IsolationID).
				Set("DistributedRouterMacAddress", p.DistributedRouterMacAddress).Set("ProviderAddress", p.ProviderAddress))
		}
		o.Set("Policies", pols)
	}
	return o
}

func hnsEndpointObject(e HNSEndpoint, nets []HNSNetwork) *pwsh.Object {
	netID := ""
	for _, n := range nets {
		if strings.EqualFold(n.Name, e.Network) {
			netID = n.ID
		}
	}
	o := NewObject("System.Management.Automation.PSCustomObject").Set("ID", e.ID).Set("Name", e.Name).
		Set("VirtualNetwork", netID).Set("VirtualNetworkName", e.Network).Set("IPAddress", e.IP).Set("MacAddress", e.MAC)
	if e.Remote {
		o.Set("IsRemoteEndpoint", true)
	}
	if e.ProviderAddress != "" {
		o.Set("Policies", []any{NewObject("System.Management.Automation.PSCustomObject").Set("Type", "PA").Set("PA", e.ProviderAddress)})
	}
	return o
}

func hnsPolicyListObject(lb HNSLoadBalancer) *pwsh.Object {
	proto := map[string]int{"TCP": 6, "UDP": 17}[lb.Protocol]
	vips := []any{}
	if lb.VIP != "" {
		vips = append(vips, lb.VIP)
	}
	elb := NewObject("System.Management.Automation.PSCustomObject").Set("Type", "ELB").Set("SourceVIP", lb.SourceVIP).
		Set("VIPs", vips).Set("ExternalPort", lb.ExternalPort).Set("InternalPort", lb.InternalPort).Set("Protocol", proto).
		Set("ILB", false).Set("DSR", lb.DSR).Set("LocalRoutedVIP", lb.LocalRoutedVIP)
	refs := make([]any, len(lb.Endpoints))
	for i, id := range lb.Endpoints {
		refs[i] = "/endpoints/" + id
	}
	return NewObject("System.Management.Automation.PSCustomObject").Set("ID", lb.ID).Set("Policies", []any{elb}).Set("References", refs)
}

// hnsCmdlets are the HostNetworkingService module's readers (Windows Server
// 2019 and later, with the Containers feature), without parameters: the
// module's filters are not modelled, and any parameter is refused.
func hnsCmdlets() []*Cmdlet {
	const src = "https://learn.microsoft.com/en-us/powershell/module/hostnetworkingservice/"
	return []*Cmdlet{
		{Name: "Get-HnsNetwork", Class: "Get-HnsNetwork", Source: src + "get-hnsnetwork",
			Behaviour: "the host's HNS networks as HNS's JSON has them (ID, Name, Type, Subnets with AddressPrefix and the VSID policy, ManagementIP, and the network's RemoteSubnetRoute policies Calico's Felix adds); no parameters (winsim/hns.go)",
			Run: func(c *Call) error {
				h := ps(c).h
				for _, n := range HNSNetworks(h) {
					c.Write(hnsNetworkObject(n, h.cfg.IP))
				}
				return nil
			}},
		{Name: "Get-HnsEndpoint", Class: "Get-HnsEndpoint", Source: src + "get-hnsendpoint",
			Behaviour: "the host's HNS endpoints (ID, Name, VirtualNetwork, VirtualNetworkName, IPAddress, MacAddress, IsRemoteEndpoint, the PA policy of a remote one); no parameters",
			Run: func(c *Call) error {
				h := ps(c).h
				nets := HNSNetworks(h)
				for _, e := range HNSEndpoints(h) {
					c.Write(hnsEndpointObject(e, nets))
				}
				return nil
			}},
		{Name: "Get-HnsPolicyList", Class: "Get-HnsPolicyList", Source: src + "get-hnspolicylist",
			Behaviour: "the host's load balancer policy lists (ID, Policies: one ELB with SourceVIP, VIPs, ExternalPort, InternalPort, Protocol, ILB, DSR, LocalRoutedVIP; References: /endpoints/<id>, as microsoft/SDN hns.psm1 New-HnsLoadBalancer builds them); no parameters",
			Run: func(c *Call) error {
				for _, lb := range HNSLoadBalancers(ps(c).h) {
					c.Write(hnsPolicyListObject(lb))
				}
				return nil
			}},
	}
}

// runHnsdiag is hnsdiag.exe list <all|networks|endpoints|loadbalancers>, in
// the form microsoft/SDN's Kubernetes/windows/kubeadm/Kubecluster.md shows
// ("Check if all policies are programmed in hns": Networks with Name and
// ID, Endpoints with Name, ID and Virtual Network Name, Namespaces, and
// LoadBalancers with ID, Virtual IPs and Direct IP IDs). Its other verbs
// and its detail flags (-d, -df) are refused.
func runHnsdiag(_ context.Context, p *Process) int {
	if len(p.Args) != 2 || !strings.EqualFold(p.Args[0], "list") {
		return refuse(p, "hnsdiag "+strings.Join(p.Args, " ")+" (only hnsdiag list <all|networks|endpoints|loadbalancers>)")
	}
	what := strings.ToLower(p.Args[1])
	if !containsFold([]string{"all", "networks", "endpoints", "loadbalancers"}, what) {
		return refuse(p, "hnsdiag list "+p.Args[1])
	}
	h := p.Host
	nets := HNSNetworks(h)
	var b strings.Builder
	if what == "all" || what == "networks" {
		b.WriteString("Networks:\r\nName             ID\r\n")
		for _, n := range nets {
			fmt.Fprintf(&b, "%-16s %s\r\n", n.Name, n.ID)
		}
		b.WriteString("\r\n")
	}
	if what == "all" || what == "endpoints" {
		b.WriteString("Endpoints:\r\nName             ID                                   Virtual Network Name\r\n")
		for _, e := range HNSEndpoints(h) {
			name := e.Name
			if name == "" {
				name = "Ethernet"
			}
			fmt.Fprintf(&b, "%-16s %-36s %s\r\n", name, e.ID, e.Network)
		}
		b.WriteString("\r\n")
	}
	if what == "all" {
		b.WriteString("Namespaces:\r\nID                                   | Endpoint IDs\r\n\r\n")
	}
	if what == "all" || what == "loadbalancers" {
		b.WriteString("LoadBalancers:\r\nID                                   | Virtual IPs      | Direct IP IDs\r\n")
		lbs := HNSLoadBalancers(h)
		sort.SliceStable(lbs, func(i, j int) bool { return lbs[i].VIP < lbs[j].VIP })
		for _, lb := range lbs {
			fmt.Fprintf(&b, "%-36s |  %-15s | %s\r\n", lb.ID, lb.VIP, strings.Join(lb.Endpoints, " "))
		}
	}
	_, _ = p.Stdout.Write([]byte(b.String()))
	return 0
}

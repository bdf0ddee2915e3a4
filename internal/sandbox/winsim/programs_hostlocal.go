package winsim

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
)

// host-local.exe, the IPAM plugin of containernetworking/plugins
// (plugins/ipam/host-local, built for Windows: plugins/windows_only.txt),
// run as a CNI plugin is run: the command in CNI_COMMAND, the network
// configuration as JSON on stdin, the result (or error) as JSON on stdout.
// kube-proxy's start script on an overlay reserves its source VIP with it
// (kubernetes-sigs/sig-windows-tools hostprocess/flannel/kube-proxy/start.ps1,
// removed in 729ae7cd; kubernetes/kubernetes#96996).
//
// Modelled: VERSION; ADD and DEL with ipam.ranges (first range of the first
// range set) or ipam.subnet, rangeStart/rangeEnd/gateway, dataDir (default
// /var/lib/cni/networks, on the current drive: C:\var\lib\cni\networks);
// reservations are files <dataDir>\<network>\<ip> holding the container id
// and interface (disk/backend.go), allocation is round-robin from
// last_reserved_ip.0 (allocator.go), the gateway (default .1) and the
// network and broadcast addresses are never handed out (range.go), and a
// container that already holds an address gets it again. A subnet with host
// bits set is refused as range.go refuses it. CHECK, IPv6 and several
// ranges are not modelled and are refused.
func init() { registerProgram("host-local", SubsystemConsole, runHostLocal) }

type cniError struct {
	CNIVersion string `json:"cniVersion,omitempty"`
	Code       int    `json:"code"`
	Msg        string `json:"msg"`
}

func runHostLocal(_ context.Context, p *Process) int {
	fail := func(code int, format string, args ...any) int {
		// skel.PluginMain prints the error as JSON on stdout and exits 1.
		b, _ := json.Marshal(cniError{Code: code, Msg: fmt.Sprintf(format, args...)})
		fmt.Fprintf(p.Stdout, "%s\n", b)
		return 1
	}
	cmd := p.Env["CNI_COMMAND"]
	if cmd == "VERSION" {
		fmt.Fprintf(p.Stdout, `{"cniVersion":"1.1.0","supportedVersions":["0.1.0","0.2.0","0.3.0","0.3.1","0.4.0","1.0.0","1.1.0"]}`+"\n")
		return 0
	}
	switch cmd {
	case "ADD", "DEL":
	case "":
		return fail(4, `required env variables [CNI_COMMAND] missing`)
	default:
		return fail(4, "winsim: host-local %s is not modelled", cmd)
	}
	for _, v := range []string{"CNI_CONTAINERID", "CNI_NETNS", "CNI_IFNAME", "CNI_PATH"} {
		if p.Env[v] == "" && !(v == "CNI_NETNS" && cmd == "DEL") {
			return fail(4, "required env variables [%s] missing", v)
		}
	}
	in, err := io.ReadAll(p.Stdin)
	if err != nil {
		return fail(999, "reading stdin: %v", err)
	}
	var conf struct {
		CNIVersion string `json:"cniVersion"`
		Name       string `json:"name"`
		IPAM       struct {
			Type       string `json:"type"`
			Subnet     string `json:"subnet"`
			RangeStart string `json:"rangeStart"`
			RangeEnd   string `json:"rangeEnd"`
			Gateway    string `json:"gateway"`
			Ranges     [][]struct {
				Subnet     string `json:"subnet"`
				RangeStart string `json:"rangeStart"`
				RangeEnd   string `json:"rangeEnd"`
				Gateway    string `json:"gateway"`
			} `json:"ranges"`
			DataDir string `json:"dataDir"`
		} `json:"ipam"`
	}
	if err := json.Unmarshal(in, &conf); err != nil {
		return fail(6, "failed to load netconf: %v", err)
	}
	subnet, start, end, gw := conf.IPAM.Subnet, conf.IPAM.RangeStart, conf.IPAM.RangeEnd, conf.IPAM.Gateway
	switch {
	case len(conf.IPAM.Ranges) == 1 && len(conf.IPAM.Ranges[0]) == 1 && subnet == "":
		r := conf.IPAM.Ranges[0][0]
		subnet, start, end, gw = r.Subnet, r.RangeStart, r.RangeEnd, r.Gateway
	case len(conf.IPAM.Ranges) > 0:
		return fail(999, "winsim: host-local with several ranges is not modelled")
	}
	if subnet == "" {
		return fail(999, "no IP ranges specified")
	}
	ip, ipnet, err := net.ParseCIDR(subnet)
	if err != nil || ip.To4() == nil {
		return fail(999, "invalid CIDR %s (winsim models IPv4 ranges only)", subnet)
	}
	if !ip.Equal(ipnet.IP) {
		ones, _ := ipnet.Mask.Size()
		return fail(999, "invalid range set 0: Network has host bits set. For a subnet mask of length %d the network address is %s", ones, ipnet.IP)
	}
	network := ipnet.IP.To4()
	first, last := addIP(network, 1), addIP(broadcast(ipnet), -1)
	if start != "" {
		first = net.ParseIP(start).To4()
	}
	if end != "" {
		last = net.ParseIP(end).To4()
	}
	gateway := addIP(network, 1)
	if gw != "" {
		gateway = net.ParseIP(gw).To4()
	}
	dataDir := conf.IPAM.DataDir
	if dataDir == "" {
		dataDir = "/var/lib/cni/networks"
	}
	winDir := strings.ReplaceAll(dataDir, "/", `\`)
	if !strings.Contains(winDir, ":") {
		winDir = "C:" + winDir
	}
	dir := filepath.Join(p.Host.DiskPath(winDir), conf.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(999, "%v", err)
	}
	owner := strings.TrimSpace(p.Env["CNI_CONTAINERID"]) + "\r\n" + p.Env["CNI_IFNAME"]
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		if strings.TrimSpace(string(b)) == strings.TrimSpace(owner) {
			if cmd == "DEL" {
				_ = os.Remove(filepath.Join(dir, e.Name())) // a DEL of a lease already gone succeeds, as in host-local
				return 0
			}
			return hostLocalResult(p, conf.CNIVersion, net.ParseIP(e.Name()).To4(), ipnet, gateway)
		}
	}
	if cmd == "DEL" {
		return 0
	}
	lastReserved := first
	if b, err := os.ReadFile(filepath.Join(dir, "last_reserved_ip.0")); err == nil {
		if prev := net.ParseIP(strings.TrimSpace(string(b))).To4(); prev != nil {
			lastReserved = addIP(prev, 1)
		}
	}
	for cand, n := lastReserved, 0; n <= ipCount(first, last); cand, n = addIP(cand, 1), n+1 {
		if ipCount(cand, last) < 0 {
			cand = first
		}
		if cand.Equal(gateway) {
			continue
		}
		path := filepath.Join(dir, cand.String())
		if _, err := os.Stat(path); err == nil {
			continue
		}
		if err := os.WriteFile(path, []byte(owner), 0o644); err != nil {
			return fail(999, "%v", err)
		}
		_ = os.WriteFile(filepath.Join(dir, "last_reserved_ip.0"), []byte(cand.String()), 0o644) // only where the next allocation starts; the lease is written above
		return hostLocalResult(p, conf.CNIVersion, cand, ipnet, gateway)
	}
	return fail(999, "failed to allocate for range 0: no IP addresses available in range set: %s-%s", first, last)
}

func hostLocalResult(p *Process, version string, ip net.IP, ipnet *net.IPNet, gw net.IP) int {
	ones, _ := ipnet.Mask.Size()
	// The 0.3.x/0.4.0/1.x result shape (types/100 and types/040).
	res := map[string]any{
		"cniVersion": version,
		"ips":        []map[string]any{{"address": fmt.Sprintf("%s/%d", ip, ones), "gateway": gw.String()}},
		"dns":        map[string]any{},
	}
	if strings.HasPrefix(version, "0.3") || strings.HasPrefix(version, "0.4") {
		res["ips"].([]map[string]any)[0]["version"] = "4"
	}
	b, _ := json.Marshal(res)
	fmt.Fprintf(p.Stdout, "%s\n", b)
	return 0
}

func addIP(ip net.IP, n int) net.IP {
	v := int64(ip[0])<<24 | int64(ip[1])<<16 | int64(ip[2])<<8 | int64(ip[3])
	v += int64(n)
	return net.IPv4(byte(v>>24), byte(v>>16), byte(v>>8), byte(v)).To4()
}

func ipCount(from, to net.IP) int {
	a := int(from[0])<<24 | int(from[1])<<16 | int(from[2])<<8 | int(from[3])
	b := int(to[0])<<24 | int(to[1])<<16 | int(to[2])<<8 | int(to[3])
	return b - a
}

func broadcast(n *net.IPNet) net.IP {
	ip := n.IP.To4()
	out := make(net.IP, 4)
	for i := range ip {
		out[i] = ip[i] | ^n.Mask[i]
	}
	return out
}

package winsim

import (
	"bytes"
	"net"
	"strings"
)

// Remote addresses of a firewall rule (New-NetFirewallRule -RemoteAddress,
// learn.microsoft.com/powershell/module/netsecurity/new-netfirewallrule:
// "Single IPv4 Address: 1.2.3.4, Single IPv6 Address: fe80::1, IPv4 Subnet
// (by network bit count): 1.2.3.4/24, IPv6 Subnet (by network bit count):
// fe80::1/48, IPv4 Subnet (by network mask): 1.2.3.4/255.255.255.0, IPv4
// Range: 1.2.3.4 through 1.2.3.7, IPv6 Range: fe80::1 through fe80::9,
// Keyword: Any, LocalSubnet, DNS, DHCP, WINS, DefaultGateway, ..."; a range
// is written "start-end" with no spaces: INetFwRule::put_RemoteAddresses,
// learn.microsoft.com/windows/win32/api/netfw/nf-netfw-inetfwrule-put_remoteaddresses).
//
// Modelled: Any, LocalSubnet, an address, a subnet (bit count or mask) and
// a range. The other keywords (DNS, DHCP, WINS, DefaultGateway, Internet,
// Intranet, IntranetRemoteAccess, PlayToDevice, CaptivePortal, and those
// restricted with a 4 or 6 suffix) name addresses the simulated network
// does not have: refused as not modelled, as is any other text (the
// simulator does not know Windows' message for an invalid address).

// remoteAddrKeywords are the documented keywords the host does not model.
var remoteAddrKeywords = []string{"DNS", "DHCP", "WINS", "DefaultGateway", "Internet", "Intranet",
	"IntranetRemoteAccess", "PlayToDevice", "CaptivePortal", "LocalSubnet4", "LocalSubnet6"}

// remoteAddrUnmodelled says why the host refuses an address token ("": the
// token is modelled).
func remoteAddrUnmodelled(a string) string {
	if strings.EqualFold(a, "Any") || strings.EqualFold(a, "LocalSubnet") {
		return ""
	}
	for _, k := range remoteAddrKeywords {
		if strings.EqualFold(a, k) || strings.EqualFold(a, k+"4") || strings.EqualFold(a, k+"6") {
			return "the -RemoteAddress keyword '" + a + "'"
		}
	}
	if _, ok := addrMatcher(a); ok {
		return ""
	}
	return "the -RemoteAddress value '" + a + "' (not an address, subnet or range the simulator reads)"
}

// addrMatcher parses an address, subnet or range into a predicate
// (addrRange, firewall_scope.go).
func addrMatcher(a string) (func(net.IP) bool, bool) {
	l, u, ok := addrRange(a)
	if !ok {
		return nil, false
	}
	return func(ip net.IP) bool {
		ip = norm(ip)
		return len(ip) == len(l) && bytes.Compare(ip, l) >= 0 && bytes.Compare(ip, u) <= 0
	}, true
}

func norm(ip net.IP) net.IP {
	if v4 := ip.To4(); v4 != nil {
		return v4
	}
	return ip.To16()
}

// ruleAdmitsAddress reports whether a rule's remote addresses admit the
// clients: Any (or none) admits everyone, LocalSubnet the clients on the
// guest's subnet, an address, subnet or range the clients whose address
// (Firewall.ClientAddress, else their own loopback source) it holds.
func ruleAdmitsAddress(addrs []string, fw *Firewall) bool {
	if len(addrs) == 0 {
		return true
	}
	client := net.ParseIP(fw.ClientAddress)
	if fw.ClientAddress == "" {
		client = defaultSource
	}
	for _, a := range addrs {
		switch {
		case strings.EqualFold(a, "Any"):
			return true
		case strings.EqualFold(a, "LocalSubnet"):
			if !fw.ClientsOutsideSubnet {
				return true
			}
		default:
			if m, ok := addrMatcher(a); ok && client != nil && m(client) {
				return true
			}
		}
	}
	return false
}

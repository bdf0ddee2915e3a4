package winsim

import (
	"bytes"
	"context"
	"encoding/binary"
	"net"
	"strings"
)

// Scoped ports. A rule whose -RemoteAddress names addresses admits a
// connection by its source address, one connection at a time: Windows
// Defender Firewall matches each inbound packet's remote address against
// the rule's address filter (New-NetFirewallRule -RemoteAddress "Specifies
// that network packets with matching IP addresses match this rule",
// learn.microsoft.com/powershell/module/netsecurity/new-netfirewallrule),
// and drops what no rule admits, unanswered (firewall_drop.go).
//
// The simulator does the same at the socket level: a classic BPF socket
// filter on the listening socket (SO_ATTACH_FILTER, socket(7);
// Documentation/networking/filter.rst) reads each packet's IPv4 source
// address (SKF_NET_OFF + 12) and drops those outside the admitted ranges;
// the kernel runs a listener's filter on the SYN before any handshake
// (net/ipv4/tcp_ipv4.c, tcp_v4_rcv: tcp_filter, before the TCP_LISTEN
// branch), so a client outside the scope retransmits its SYN until its own
// dial timeout, as against Windows. Accepted connections inherit the filter
// (net/core/sock.c, sk_clone_lock), which their own source passes. No
// privilege is needed for a socket filter. Go listens with MPTCP by
// default, which refuses socket filters (EOPNOTSUPP): the host's listeners
// are plain TCP (listenTCP). Limits: Linux and IPv4 only (the host listens
// on an IPv4 address); elsewhere a scoped port is dropped for every client
// unless the test's own clients are admitted, then served to everyone.
//
// Every process of the sandbox reaches a guest over the loopback interface,
// from 127.0.0.1 unless it binds another source: the provider, the test
// process and the API server alike. Firewall.ClientAddress, when set, is
// the address the guest sees those clients at (a runner's address on a
// real network); a client that binds another loopback source (a test
// standing for a foreign host) is seen at its own.

// defaultSource is the source address of a loopback client that binds none.
var defaultSource = net.IPv4(127, 0, 0, 1)

// listenTCP listens on a host's address with plain TCP (no MPTCP), so the
// firewall may attach its filter to the socket.
func listenTCP(addr string) (net.Listener, error) {
	var lc net.ListenConfig
	lc.SetMultipathTCP(false)
	return lc.Listen(context.Background(), "tcp", addr)
}

// portScope is what the firewall's rules admit to one port.
type portScope struct {
	all bool // a rule admits every address (Any, or LocalSubnet with the clients on the subnet)
	// clients: the sandbox's own clients (from 127.0.0.1, seen at
	// Firewall.ClientAddress) are admitted.
	clients bool
	ranges  []ipv4Range // other sources admitted
}

func (s portScope) none() bool { return !s.all && !s.clients && len(s.ranges) == 0 }

type ipv4Range struct{ lo, hi uint32 }

// firewallScope reads the enabled inbound Allow rules that cover a
// listener's port on the active profile into the addresses they admit.
func (h *Host) firewallScope(listener string) portScope {
	fw := h.cfg.Firewall
	if fw == nil {
		return portScope{all: true}
	}
	var s portScope
	port := wellKnownPort[listener]
	for _, r := range h.firewall() {
		if !strings.EqualFold(r.Direction, "Inbound") || !strings.EqualFold(r.Action, "Allow") || !strings.EqualFold(r.Enabled, "True") {
			continue
		}
		if !ruleHasTCP(r.Protocol) || !ruleHasPort(r.LocalPort, port) || !ruleHasProfile(r.Profile, fw.Profile) {
			continue
		}
		if ruleAdmitsAddress(r.RemoteAddress, fw) {
			s.clients = true
		}
		if len(r.RemoteAddress) == 0 {
			s.all = true
		}
		for _, a := range r.RemoteAddress {
			switch {
			case strings.EqualFold(a, "Any"):
				s.all = true
			case strings.EqualFold(a, "LocalSubnet"):
				s.all = s.all || !fw.ClientsOutsideSubnet
			default:
				if lo, hi, ok := addrRange(a); ok && lo.To4() != nil {
					s.ranges = append(s.ranges, ipv4Range{binary.BigEndian.Uint32(lo.To4()), binary.BigEndian.Uint32(hi.To4())})
				}
			}
		}
	}
	return s
}

// addrRange is an address, subnet or range as its first and last address.
func addrRange(a string) (lo, hi net.IP, ok bool) {
	if ip := net.ParseIP(a); ip != nil {
		return norm(ip), norm(ip), true
	}
	if _, rest, found := strings.Cut(a, "/"); found {
		var n *net.IPNet
		if _, parsed, err := net.ParseCIDR(a); err == nil {
			n = parsed
		} else {
			base, _, _ := strings.Cut(a, "/")
			ip, m := net.ParseIP(base), net.ParseIP(rest).To4()
			if ip == nil || ip.To4() == nil || m == nil {
				return nil, nil, false
			}
			mask := net.IPMask(m)
			if ones, bits := mask.Size(); bits == 0 && ones == 0 {
				return nil, nil, false // not a contiguous mask
			}
			n = &net.IPNet{IP: ip.To4().Mask(mask), Mask: mask}
		}
		first := norm(n.IP.Mask(n.Mask))
		last := make(net.IP, len(first))
		mask := n.Mask
		if len(mask) != len(first) {
			mask = mask[len(mask)-len(first):]
		}
		for i := range first {
			last[i] = first[i] | ^mask[i]
		}
		return first, last, true
	}
	if l, u, found := strings.Cut(a, "-"); found {
		lo, hi := net.ParseIP(l), net.ParseIP(u)
		if lo == nil || hi == nil || (lo.To4() == nil) != (hi.To4() == nil) {
			return nil, nil, false
		}
		lo, hi = norm(lo), norm(hi)
		if bytes.Compare(lo, hi) > 0 {
			return nil, nil, false
		}
		return lo, hi, true
	}
	return nil, nil, false
}

// scopeLocked applies the firewall's rules to a listener's port: it drops
// the port when no rule admits anyone (false: nothing serves), and filters
// the sources when rules admit some addresses only. A platform without
// socket filters serves the port when the sandbox's own clients are
// admitted, else drops it. h.mu is held.
func (h *Host) scopeLocked(name string, ln net.Listener) bool {
	s := h.firewallScope(name)
	switch {
	case s.all:
		return true
	case s.none():
		h.dropLocked(name, ln)
		return false
	case ln == nil:
		return true // nothing listens: an admitted address is refused at once
	}
	if err := scopeSources(ln, s); err != nil && !s.clients {
		h.dropLocked(name, ln)
		return false
	}
	return true
}

package winsim

import (
	"net"
	"strconv"
	"time"
)

// Dropped connections. Windows Defender Firewall blocks an inbound
// connection no rule admits, and answers it with nothing: the firewall
// configuration service provider gives DefaultInboundAction "Default value
// is 1 (block)" and DisableStealthMode "When this option is false, the
// server operates in stealth mode ... Default value is false", stealth mode
// being what keeps "the host computer from responding to unsolicited
// network traffic" (learn.microsoft.com/windows/client-management/mdm/firewall-csp,
// DisableStealthModeIpsecSecuredPacketExemption). A client's SYN goes
// unanswered and its connect waits until its own dial timeout: what a runner
// outside the guests' subnet sees of a stock guest's WinRM HTTP port
// (Public profile, LocalSubnet rule), and anyone of a port no rule opens
// (5986 and 22 on a stock guest).
//
// The simulator makes that real at the socket level, for any client
// process (the provider runs as Terraform's plugin process), without
// privileges, iptables or a network namespace: the port stays bound on the
// guest's address by a listener that never accepts, whose accept queue is
// made full. Its backlog is set to 0 (listen(2) again on a listening socket
// only adjusts the backlog: net/ipv4/af_inet.c, __inet_listen_sk) and one
// connection of the host's own fills the queue; Linux then drops every
// further SYN to the port (net/ipv4/tcp_input.c, tcp_conn_request: a full
// accept queue counts ListenOverflows and drops), the client retransmits
// it and its connect times out, as against a firewall's drop. Limits: only
// on Linux (elsewhere the port is closed and the connection refused at
// once); a SYN that arrives in the microseconds between the listen and the
// filling connection completes its handshake and then hangs unanswered;
// with net.ipv4.tcp_syncookies on (the default) the kernel logs "Possible
// SYN flooding on port ..." once per such port; a host that is down
// (powered off, rebooting) has its ports closed, refused at once, not
// dropped.

// droppedPort is a port whose connection attempts the firewall drops.
type droppedPort struct {
	ln     net.Listener
	filler net.Conn // the host's own connection filling the accept queue
}

// fillTimeout bounds the host's own connection to a dropped port: on
// loopback the kernel completes it at once; without SYN cookies the kernel
// drops it too, and the port drops every SYN anyway.
const fillTimeout = 500 * time.Millisecond

// dropOn turns a bound listener into a dropped port; where the platform
// cannot (dropSYNs), the port is closed instead.
func dropOn(ln net.Listener) *droppedPort {
	tl, ok := ln.(*net.TCPListener)
	if !ok || dropSYNs(tl) != nil {
		_ = ln.Close() // refused at once: the only stand-in left
		return nil
	}
	d := &droppedPort{ln: ln}
	if c, err := net.DialTimeout("tcp", ln.Addr().String(), fillTimeout); err == nil {
		d.filler = c
	}
	return d
}

func (d *droppedPort) close() {
	_ = d.ln.Close() // resets the queued connection too
	if d.filler != nil {
		_ = d.filler.Close()
	}
}

// dropLocked makes the firewall drop connections to a listener's port: ln
// when the listener is bound, else the port the host was configured with
// for it (a port no listener serves is dropped too where no rule admits
// it; 0 or PortDisabled: none to drop). h.mu is held.
func (h *Host) dropLocked(name string, ln net.Listener) {
	if ln == nil {
		port := h.configuredPort(name)
		if port <= 0 {
			return
		}
		var err error
		if ln, err = listenTCP(net.JoinHostPort(h.cfg.IP, strconv.Itoa(port))); err != nil {
			return // held by someone else: nothing the host can do about it
		}
	}
	if d := dropOn(ln); d != nil {
		h.dropped[name] = d
	}
}

// undropLocked frees a dropped port, for a listener to serve on it (a rule
// admitting it at run time). h.mu is held.
func (h *Host) undropLocked(name string) {
	if d, ok := h.dropped[name]; ok {
		d.close()
		delete(h.dropped, name)
	}
}

// configuredPort is the port the host was started with for a listener,
// before its disk decided which listeners exist.
func (h *Host) configuredPort(name string) int {
	switch name {
	case "winrm-http":
		return h.configured.WinRM
	case "winrm-https":
		return h.configured.WinRMHTTPS
	case "ssh":
		return h.configured.SSH
	}
	return 0
}

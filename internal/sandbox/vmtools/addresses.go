package vmtools

import (
	"fmt"
	"net"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// leaseLocked gives a VM an address of 127.1.0.0-127.16.255.255 that no other
// VM holds.
func (h *Hosts) leaseLocked(ref types.ManagedObjectReference) string {
	for {
		h.nextLease = (h.nextLease + 1) % (1 << 20)
		n := h.nextLease
		ip := net.IPv4(127, byte(1+n/65536), byte(n/256), byte(n)).String()
		if byte(n) == 0 || byte(n) == 255 {
			continue
		}
		if _, taken := h.leases[ip]; taken || h.staticInUseLocked(ip) {
			continue
		}
		h.leases[ip] = ref
		return ip
	}
}

func (h *Hosts) staticInUseLocked(ip string) bool {
	for _, st := range h.vms {
		if st.static && st.ip == ip {
			return true
		}
	}
	return false
}

func (h *Hosts) release(ref types.ManagedObjectReference) {
	for ip, owner := range h.leases {
		if owner == ref {
			delete(h.leases, ip)
		}
	}
}

// probePorts picks the Windows ports, or alternates where those cannot be bound.
func probePorts() winsim.Ports {
	try := func(port, alt int) int {
		ln, err := net.Listen("tcp", net.JoinHostPort("127.1.255.254", fmt.Sprint(port)))
		if err != nil {
			return alt
		}
		_ = ln.Close() // only a probe that the port is free
		return port
	}
	d := winsim.DefaultPorts()
	return winsim.Ports{WinRM: try(d.WinRM, 15985), WinRMHTTPS: try(d.WinRMHTTPS, 15986), SSH: try(d.SSH, 2222)}
}

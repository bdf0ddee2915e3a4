//go:build linux

package winsim

import (
	"encoding/binary"
	"net"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// skfNetOff is SKF_NET_OFF (include/uapi/linux/filter.h, -0x100000): a
// classic BPF load at this offset plus n reads the packet's network header
// at n; the IPv4 source address is at 12 (RFC 791, 3.1).
const skfNetOff = 0xfff00000

// scopeSources attaches a socket filter to a listener that passes the
// packets of the admitted sources and drops the others (firewall_scope.go).
func scopeSources(ln net.Listener, s portScope) error {
	tl, ok := ln.(*net.TCPListener)
	if !ok {
		return unix.EOPNOTSUPP
	}
	const accept, drop = 0xffffffff, 0
	clients := uint32(drop)
	if s.clients {
		clients = accept
	}
	loopback := binary.BigEndian.Uint32(defaultSource.To4())
	prog := []bpf.Instruction{
		bpf.LoadAbsolute{Off: skfNetOff + 12, Size: 4},
		// The sandbox's own clients are judged as seen at ClientAddress.
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: loopback, SkipTrue: 1},
		bpf.RetConstant{Val: clients},
	}
	for _, r := range s.ranges {
		prog = append(prog,
			bpf.JumpIf{Cond: bpf.JumpLessThan, Val: r.lo, SkipTrue: 2},
			bpf.JumpIf{Cond: bpf.JumpGreaterThan, Val: r.hi, SkipTrue: 1},
			bpf.RetConstant{Val: accept})
	}
	prog = append(prog, bpf.RetConstant{Val: drop})
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return err
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, ins := range raw {
		filter[i] = unix.SockFilter{Code: ins.Op, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}
	}
	rc, err := tl.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptSockFprog(int(fd), unix.SOL_SOCKET, unix.SO_ATTACH_FILTER,
			&unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]})
	}); err != nil {
		return err
	}
	return serr
}

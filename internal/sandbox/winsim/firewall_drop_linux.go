//go:build linux

package winsim

import (
	"net"
	"syscall"
)

// dropSYNs sets a listening socket's backlog to 0 (listen(2) on a socket
// that listens already only changes its backlog: net/ipv4/af_inet.c,
// __inet_listen_sk), so that once one connection waits in its accept queue
// the kernel drops every further SYN (firewall_drop.go).
func dropSYNs(ln *net.TCPListener) error {
	rc, err := ln.SyscallConn()
	if err != nil {
		return err
	}
	var lerr error
	if err := rc.Control(func(fd uintptr) { lerr = syscall.Listen(int(fd), 0) }); err != nil {
		return err
	}
	return lerr
}

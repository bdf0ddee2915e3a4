//go:build !linux

package winsim

import (
	"errors"
	"net"
)

// dropSYNs is Linux's (firewall_drop.go): elsewhere a dropped port is
// closed, and the connection refused at once.
func dropSYNs(*net.TCPListener) error {
	return errors.New("winsim: dropping a port's SYNs is modelled on Linux only")
}

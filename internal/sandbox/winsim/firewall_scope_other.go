//go:build !linux

package winsim

import (
	"errors"
	"net"
)

// scopeSources: socket filters are Linux's (firewall_scope.go).
func scopeSources(net.Listener, portScope) error {
	return errors.New("socket filters are not available on this platform")
}

package controlplane

import (
	"fmt"
	"net"
)

// freePorts returns n distinct free TCP ports on 127.0.0.1. The listeners are
// held until all are chosen so the ports differ; another process could still
// take one before the component binds it, which a start then reports.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("choosing a free port: %w", err)
		}
		defer func() { _ = l.Close() }() // only held so that no two ports are the same
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

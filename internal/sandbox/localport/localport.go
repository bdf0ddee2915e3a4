// Package localport chooses the loopback ports the sandbox's child processes
// (etcd, kube-apiserver, CoreDNS) are told to listen on.
//
// A child given a port cannot be handed a listener, so the port is free when
// it is chosen and bound by the child a moment, or seconds, later. A port
// from the kernel's ephemeral range (net.ipv4.ip_local_port_range) can be
// taken in between by anything that binds port 0 or opens an outgoing
// connection: on a busy test machine that happened (vcsim's listener took
// the port chosen for kube-controller-manager). Ports below the ephemeral
// range are never assigned automatically, so only another process that
// chooses ports explicitly, as this one does, can take them; choosing at
// random over thousands of them makes that unlikely, and a port found taken
// is skipped.
package localport

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// lowest is the bottom of the range chosen from: above the registered
// ports most services listen on by default.
const lowest = 20000

// ephemeralRangeFile holds the kernel's ephemeral port range (Linux).
const ephemeralRangeFile = "/proc/sys/net/ipv4/ip_local_port_range"

// Linux's default ephemeral range starts here; macOS and the BSDs start at
// 49152, so ports below this are outside either.
const defaultEphemeralStart = 32768

// Reserve returns n distinct ports on 127.0.0.1, free for TCP (and for UDP
// too when udp is set) when chosen, outside the ephemeral range.
func Reserve(n int, udp bool) ([]int, error) {
	top := ephemeralStart(ephemeralRangeFile)
	if top-lowest < 100*n {
		return nil, fmt.Errorf("localport: the ephemeral range starts at %d, leaving too few ports below it", top)
	}
	var (
		ports   []int
		holders []interface{ Close() error }
	)
	defer func() {
		for _, h := range holders {
			_ = h.Close()
		}
	}()
	// Held until all are chosen, so no port is chosen twice.
	for attempts := 0; len(ports) < n; attempts++ {
		if attempts == 50*n {
			return nil, errors.New("localport: no free port found below the ephemeral range after many attempts")
		}
		port := lowest + rand.IntN(top-lowest)
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		l, err := net.Listen("tcp", addr)
		if err != nil {
			continue // taken
		}
		holders = append(holders, l)
		if udp {
			u, err := net.ListenPacket("udp", addr)
			if err != nil {
				continue
			}
			holders = append(holders, u)
		}
		ports = append(ports, port)
	}
	return ports, nil
}

// ephemeralStart reads the first port of the kernel's ephemeral range, or
// the Linux default where it cannot be read.
func ephemeralStart(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return defaultEphemeralStart
	}
	fields := strings.Fields(string(b))
	if len(fields) != 2 {
		return defaultEphemeralStart
	}
	start, err := strconv.Atoi(fields[0])
	if err != nil || start <= lowest {
		return defaultEphemeralStart
	}
	return start
}

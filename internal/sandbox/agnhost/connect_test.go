package agnhost

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
)

// loopback is a pod network on this machine's loopback: real sockets, no
// DNS (every name is unknown).
type loopback struct{}

func (loopback) Lookup(_ context.Context, host string) (netip.Addr, error) {
	return netip.Addr{}, fmt.Errorf("lookup %s: no such host", host)
}

func (loopback) Dial(ctx context.Context, network string, dst netip.AddrPort) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, dst.String())
}

func (loopback) Dropped(err error) bool { return strings.Contains(err.Error(), "dropped") }

// dropping drops every packet, as HNS does one with no load balancer.
type dropping struct{ loopback }

func (dropping) Dial(context.Context, string, netip.AddrPort) (net.Conn, error) {
	return nil, errors.New("the packet is dropped")
}

func TestConnect(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	open := l.Addr().String()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := closed.Addr().String()
	_ = closed.Close()

	for _, tc := range []struct {
		name     string
		pod      Net
		argv     []string
		binaries []string
		code     int
		prefix   string
	}{
		{"connects", loopback{}, []string{"/agnhost", "connect", open}, []string{"agnhost"}, 0, ""},
		{"connects with a timeout", loopback{}, []string{"connect", "--timeout=5s", open}, nil, 0, ""},
		{"refused", loopback{}, []string{"/agnhost", "connect", refused}, []string{"agnhost"}, 1, "REFUSED\n"},
		{"dropped is a timeout", dropping{}, []string{"connect", open}, nil, 1, "TIMEOUT\nthe packet is dropped\n"},
		{"a name the pod cannot resolve", loopback{}, []string{"connect", "nowhere:80"}, nil, 1, "DNS: lookup nowhere: no such host\n"},
		{"a binary not named", loopback{}, []string{"C:\\agnhost.exe", "connect", open}, []string{"agnhost"}, 1, `Error: unknown command "C:\\agnhost.exe" for "app"`},
		{"a binary named", loopback{}, []string{"C:\\agnhost.exe", "connect", open}, []string{"agnhost", "agnhost.exe"}, 0, ""},
		{"another subcommand", loopback{}, []string{"/agnhost", "netexec"}, []string{"agnhost"}, 1, `Error: unknown command "netexec" for "app"`},
		{"no destination", loopback{}, []string{"connect"}, nil, 1, "Error: accepts 1 arg(s), received 0\n"},
		{"sctp", loopback{}, []string{"connect", "--protocol=sctp", open}, nil, 1, "Unsupported protocol\nsctp"},
		{"no port", loopback{}, []string{"connect", "127.0.0.1"}, nil, 1, "UNKNOWN: address 127.0.0.1: missing port in address\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			code := Connect(t.Context(), tc.pod, tc.argv, &out, tc.binaries...)
			if code != tc.code || !strings.HasPrefix(out.String(), tc.prefix) || (tc.code == 0) != (out.Len() == 0) {
				t.Errorf("Connect(%q) = %d, %q; want %d, output starting %q", tc.argv, code, out.String(), tc.code, tc.prefix)
			}
		})
	}
}

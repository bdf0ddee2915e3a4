// Package agnhost is Kubernetes' e2e test image agnhost
// (kubernetes/kubernetes test/images/agnhost) as the sandbox's pods run it,
// Linux (linuxnode) and Windows (kubeletsim) alike: its subcommands behave
// the same on both, which is the image's purpose. Of them only connect is
// modelled; any other is refused as agnhost's cobra root refuses an
// unknown command.
package agnhost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"syscall"

	"github.com/spf13/pflag"
)

// Net is the network of the pod connect runs in.
type Net interface {
	// Lookup resolves a name as the pod's resolver does (the kubelet's
	// clusterDNS, the pod's search list, ndots:5).
	Lookup(ctx context.Context, host string) (netip.Addr, error)
	// Dial opens a connection from the pod to dst.
	Dial(ctx context.Context, network string, dst netip.AddrPort) (net.Conn, error)
	// Dropped tells whether a failed Dial is a packet the node's dataplane
	// drops, which a real client sees only as a timeout.
	Dropped(err error) bool
}

// Connect is agnhost's connect subcommand (test/images/agnhost/connect/
// connect.go) run from argv, the container's command and arguments, with
// or without the image's binary first (a name ending in one of binaries):
// resolve the destination through the pod's DNS, connect over TCP or UDP,
// exit 0; or print what failed and exit 1: "DNS: <err>", "TIMEOUT",
// "REFUSED" or "OTHER: <err>" as upstream does. After TIMEOUT and REFUSED
// the simulator adds the reason on a line of its own (upstream prints the
// word alone), so a failed test says what refused or dropped the packet.
// Its other protocol, sctp, is not modelled and refused as an unknown
// protocol is, in upstream's words.
func Connect(ctx context.Context, pod Net, argv []string, out io.Writer, binaries ...string) int {
	if len(argv) > 0 && hasAnySuffix(argv[0], binaries) {
		argv = argv[1:]
	}
	if len(argv) == 0 || argv[0] != "connect" {
		cmd := ""
		if len(argv) > 0 {
			cmd = argv[0]
		}
		fmt.Fprintf(out, "Error: unknown command %q for \"app\"\n", cmd)
		return 1
	}
	fs := pflag.NewFlagSet("connect", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	timeout := fs.Duration("timeout", 0, "")
	protocol := fs.String("protocol", "tcp", "")
	_ = fs.String("udp-data", "hostname", "")
	if err := fs.Parse(argv[1:]); err != nil || fs.NArg() != 1 {
		fmt.Fprintf(out, "Error: accepts 1 arg(s), received %d\n", fs.NArg())
		return 1
	}
	if *protocol != "tcp" && *protocol != "udp" {
		// upstream's own words: fmt.Fprint(os.Stderr, "Unsupported protocol\n", protocol)
		fmt.Fprint(out, "Unsupported protocol\n", *protocol)
		return 1
	}
	host, port, err := net.SplitHostPort(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(out, "UNKNOWN: %v\n", err)
		return 1
	}
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		if addr, err = pod.Lookup(ctx, host); err != nil {
			fmt.Fprintf(out, "DNS: %v\n", err)
			return 1
		}
	}
	var p uint16
	if _, err := fmt.Sscan(port, &p); err != nil {
		fmt.Fprintf(out, "DNS: lookup %s: unknown port\n", port)
		return 1
	}
	conn, err := pod.Dial(ctx, *protocol, netip.AddrPortFrom(addr, p))
	if err == nil {
		_ = conn.Close()
		return 0
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		fmt.Fprintf(out, "REFUSED\n%v\n", err)
	case errors.Is(err, context.DeadlineExceeded) || pod.Dropped(err):
		fmt.Fprintf(out, "TIMEOUT\n%v\n", err)
	default:
		fmt.Fprintf(out, "OTHER: %v\n", err)
	}
	return 1
}

func hasAnySuffix(s string, suffixes []string) bool {
	for _, suffix := range suffixes {
		if strings.HasSuffix(s, suffix) {
			return true
		}
	}
	return false
}

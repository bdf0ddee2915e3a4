package kubeletsim

import (
	"fmt"
	"net"
	"sort"
	"strings"
)

// flags are the command-line values the simulator acts on, as kubeletcheck
// (the kubelet's own flag set and validation, see checker.go) parsed them.
type flags struct {
	// changed are the flags the command line set (name -> value), as
	// cliflag.PrintFlags logs them.
	changed map[string]string

	Config              string
	Kubeconfig          string
	BootstrapKubeconfig string
	CertDir             string
	HostnameOverride    string
	NodeIP              string
	NodeLabels          map[string]string
	RootDir             string
	WindowsService      bool
}

func flagsFrom(f *checkFlags, changed map[string]string) *flags {
	return &flags{
		changed: changed, Config: f.KubeletConfigFile, Kubeconfig: f.KubeConfig,
		BootstrapKubeconfig: f.BootstrapKubeconfig, CertDir: windowsPath(f.CertDirectory),
		HostnameOverride: f.HostnameOverride, NodeIP: f.NodeIP, NodeLabels: f.NodeLabels,
		RootDir: windowsPath(f.RootDirectory), WindowsService: f.WindowsService,
	}
}

// windowsPath is where a kubelet default such as /var/lib/kubelet/pki lands
// on Windows: a rooted path without a drive is on the current drive (C:).
func windowsPath(p string) string {
	if strings.HasPrefix(p, "/") {
		return `C:` + strings.ReplaceAll(p, "/", `\`)
	}
	return p
}

// validateNodeIP is the --node-ip parsing of cmd/kubelet/app/server.go's run
// (nodeutil.ParseNodeIPArgument): an error there fails the kubelet's run.
func (f *flags) validateNodeIP() error {
	if f.NodeIP == "" {
		return nil
	}
	for _, ip := range strings.Split(f.NodeIP, ",") {
		if net.ParseIP(strings.TrimSpace(ip)) == nil {
			return fmt.Errorf("failed to run Kubelet: bad --node-ip %q; must contain either a single IP or a dual-stack pair of IPs", f.NodeIP)
		}
	}
	return nil
}

// visit lists the flags given, sorted, as kubelet logs them at start
// ("FLAG: --x=y").
func (f *flags) visit(fn func(name, value string)) {
	names := make([]string, 0, len(f.changed))
	for n := range f.changed {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fn(n, f.changed[n])
	}
}

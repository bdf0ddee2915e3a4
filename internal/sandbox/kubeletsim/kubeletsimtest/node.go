// Package kubeletsimtest prepares simulated Windows hosts the way a clone of
// a golden image is: the kubelet, kube-proxy and containerd binaries in
// place, containerd registered (and running), and the kubelet service wired
// to the simulated kubelet. Tests of the kubelet simulation and of the
// provider's node operations share it.
//
// Like the rest of the simulated world it imports nothing of the provider:
// it writes the image's layout from its own constants (layout_test.go holds
// them equal to internal/bootstrap's) and reaches the host with an outside
// WinRM client (masterzen/winrm), not the provider's transport. Tests that
// run the provider's steps on a node connect their own transport to it
// (Fixture: Host.Ports, CA, Password).
package kubeletsimtest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/masterzen/winrm"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/kubeletsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/winsimtest"
)

// Versions in the simulated binaries the golden image would have installed.
const (
	KubeletVersion    = "v1.36.3"
	ContainerdVersion = "2.2.7"
)

// Where the golden image leaves the node's programs and containerd's
// configuration (the image build's paths; layout_test.go holds them equal
// to internal/bootstrap's, so a change there fails here until both agree).
const (
	KubeletExe       = `C:\k\kubelet.exe`
	KubeProxyExe     = `C:\k\kube-proxy.exe`
	KubeLogRunnerExe = `C:\k\kube-log-runner.exe`
	ContainerdExe    = `C:\Program Files\containerd\bin\containerd.exe`
	ContainerdConf   = `C:\Program Files\containerd\config.toml`
)

// FlanneldExe is where the golden image installs flanneld.exe;
// FlannelVersion is its version.
const (
	FlanneldExe    = `C:\k\flanneld.exe`
	FlannelVersion = "v0.27.4"
)

// Options shape a node.
type Options struct {
	// Checker is the kubeletcheck helper the node's kubelet judges its
	// command line with (kubeletsim.Config.Checker): the sandbox's
	// KubeletChecker. Required.
	Checker         string
	Faults          winsim.Faults
	ContainerdDown  bool // containerd installed but not running
	NoKubeletBinary bool // kubelet.exe missing
	// NoCNI leaves out the CNI network configuration and plugins: the node
	// then never becomes Ready ("cni plugin not initialized").
	NoCNI bool
	// LocalAccounts are local users besides the built-in Administrator
	// (winsim.HostConfig.LocalAccounts).
	LocalAccounts []winsim.LocalAccount
	// Overlay carries the node's pods' connections to other nodes' pods
	// (kubeletsim.Config.Overlay): the sandbox's Overlay.
	Overlay kubeletsim.Overlay
	// GMSA is the domain the node's containers retrieve gMSA passwords
	// from (kubeletsim.Config.GMSA); nil: none.
	GMSA kubeletsim.GMSADomain
}

// CNI layout of the golden image: containerd's config names these
// directories (flannel-io/cni-plugin's flannel.exe and containernetworking's
// win-overlay/host-local in the bin dir; the conflist written at join).
const (
	CNIBinDir   = `C:\opt\cni\bin`
	CNIConfDir  = `C:\etc\cni\net.d`
	CNIConfList = CNIConfDir + `\10-flannel.conflist`
)

// ContainerdConfig is the golden image's containerd config.toml (version 3,
// containerd 2.2: docs/cri/config.md).
const ContainerdConfig = "version = 3\n[plugins.'io.containerd.cri.v1.runtime'.cni]\n  bin_dirs = ['C:\\opt\\cni\\bin']\n  conf_dir = 'C:\\etc\\cni\\net.d'\n"

// FlannelConfList is the CNI network a flannel node gets.
const FlannelConfList = `{"cniVersion":"0.3.0","name":"vxlan0","plugins":[{"type":"flannel","capabilities":{"portMappings":true,"dns":true},"delegate":{"type":"win-overlay","policies":[]}}]}`

// Executable is the content of a simulated Windows executable (see
// winsim.Process): the host knows the program by its second line.
func Executable(program, version string) string {
	return "MZ simulated Windows executable\r\n" + program + " " + version + "\r\n"
}

// WriteCNI installs the CNI plugins and the flannel network configuration.
func WriteCNI(t testing.TB, h *winsim.Host) {
	t.Helper()
	files := map[string]string{
		CNIBinDir + `\flannel.exe`:     Executable("flannel", "v1.6.2-flannel1"),
		CNIBinDir + `\win-overlay.exe`: Executable("win-overlay", "v1.6.2"),
		CNIBinDir + `\host-local.exe`:  Executable("host-local", "v1.6.2"),
		CNIConfList:                    FlannelConfList,
	}
	for p, content := range files {
		if err := h.WriteFile(p, []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
}

// Node is a simulated Windows host prepared like a golden image clone.
type Node struct {
	*winsimtest.Fixture
	Name string
}

// Result is what a script printed and its exit code (Stderr as the host
// sent it: PowerShell's CLIXML for a PowerShell error).
type Result struct {
	Stdout, Stderr string
	ExitCode       int
}

// NewNode starts a host named name (its computer name is the upper-case
// form) prepared like a golden image clone.
func NewNode(t testing.TB, name string, o Options) *Node {
	t.Helper()
	if o.Checker == "" {
		t.Fatal("kubeletsimtest: Options.Checker is required (the sandbox's KubeletChecker)")
	}
	f := winsimtest.StartHost(t, func(c *winsim.HostConfig) {
		c.ComputerName = strings.ToUpper(name)
		c.BIOSUUID = "4210f7c2-5d2e-6c35-bd31-2a6f0c1e9a11"
		c.NumCPU, c.MemoryMB = 4, 8192
		c.Faults = o.Faults
		c.LocalAccounts = o.LocalAccounts
		c.Programs = kubeletsim.Programs(kubeletsim.HookOptions{Logf: t.Logf, Checker: o.Checker, Overlay: o.Overlay, GMSA: o.GMSA})
	})
	files := map[string]string{
		ContainerdExe:    Executable("containerd", "v"+ContainerdVersion),
		KubeProxyExe:     Executable("kube-proxy", KubeletVersion),
		KubeLogRunnerExe: Executable("kube-log-runner", KubeletVersion),
		FlanneldExe:      Executable("flanneld", FlannelVersion),
		ContainerdConf:   ContainerdConfig,
	}
	if !o.NoKubeletBinary {
		files[KubeletExe] = Executable("kubelet", KubeletVersion)
	}
	for p, content := range files {
		if err := f.Host.WriteFile(p, []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	if !o.NoCNI {
		WriteCNI(t, f.Host)
	}
	n := &Node{Fixture: f, Name: name}
	// The golden image's containerd service, registered as the image build
	// registers it (containerd.exe --register-service).
	script := fmt.Sprintf("& '%s' --register-service --config '%s'\nif ($LASTEXITCODE) { throw 'containerd --register-service failed' }\n",
		ContainerdExe, ContainerdConf)
	if !o.ContainerdDown {
		script += "Start-Service -Name 'containerd'\n"
	}
	n.Run(t, script)
	return n
}

// runTimeout bounds one script of the harness; they take milliseconds.
const runTimeout = time.Minute

// Run runs a PowerShell script over WinRM (HTTPS, NTLM) with an outside
// client, masterzen/winrm's -EncodedCommand, and fails the test when it
// cannot run or exits non-zero. The harness's scripts are short: a script
// must fit cmd.exe's 8191-character line once encoded.
func (n *Node) Run(t testing.TB, script string) Result {
	t.Helper()
	ep := &winrm.Endpoint{Host: "127.0.0.1", Port: n.Host.Ports().WinRMHTTPS, HTTPS: true,
		TLSServerName: "localhost", CACert: n.CA.CertPEM, Timeout: runTimeout}
	params := *winrm.DefaultParameters // a copy: DefaultParameters is shared
	params.TransportDecorator = func() winrm.Transporter { return &winrm.ClientNTLM{} }
	c, err := winrm.NewClientWithParameters(ep, "Administrator", n.Password, &params)
	if err != nil {
		t.Fatalf("running on %s: %v", n.Name, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	stdout, stderr, code, err := c.RunPSWithContext(ctx, script)
	res := Result{Stdout: stdout, Stderr: stderr, ExitCode: code}
	if err != nil {
		t.Fatalf("running on %s: %v", n.Name, err)
	}
	if code != 0 {
		t.Fatalf("running on %s: exit code %d\nstdout: %s\nstderr: %s", n.Name, code, res.Stdout, res.Stderr)
	}
	return res
}

// KubeletLog is the simulated kubelet's log so far: the file the host's
// configuration sends its output to, as on a real host: kube-log-runner's
// --log-file in the kubelet service's command line; "" when nothing
// redirects it.
func (n *Node) KubeletLog() string {
	svc, ok := n.Host.Service(kubeletsim.ServiceName)
	if !ok {
		return ""
	}
	for _, f := range strings.Fields(svc.BinaryPathName) {
		f = strings.Trim(f, `"`)
		for _, flag := range []string{"--log-file=", "-log-file="} {
			if strings.HasPrefix(f, flag) {
				b, _ := os.ReadFile(n.Host.DiskPath(strings.TrimPrefix(f, flag)))
				return string(b)
			}
		}
	}
	return ""
}

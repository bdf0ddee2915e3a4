// Package kubeletsimtest prepares simulated Windows hosts the way a clone of
// a golden image is: the kubelet, kube-proxy and containerd binaries in
// place, containerd registered (and running), and the kubelet service wired
// to the simulated kubelet. Tests of the kubelet simulation and of the
// provider's node operations share it.
package kubeletsimtest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/remote"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/kubeletsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/winsimtest"
)

// Versions in the simulated binaries the golden image would have installed.
const (
	KubeletVersion    = "v1.36.3"
	ContainerdVersion = "2.2.7"
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

// Node is a simulated Windows host with an open WinRM transport.
type Node struct {
	*winsimtest.Fixture
	Name      string
	Transport remote.Transport
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
		c.Programs = kubeletsim.Programs(kubeletsim.HookOptions{Logf: t.Logf, Checker: o.Checker})
	})
	files := map[string]string{
		bootstrap.ContainerdExe:    Executable("containerd", "v"+ContainerdVersion),
		bootstrap.KubeProxyExe:     Executable("kube-proxy", KubeletVersion),
		bootstrap.KubeLogRunnerExe: Executable("kube-log-runner", KubeletVersion),
		FlanneldExe:                Executable("flanneld", FlannelVersion),
		bootstrap.ContainerdConf:   ContainerdConfig,
	}
	if !o.NoKubeletBinary {
		files[bootstrap.KubeletExe] = Executable("kubelet", KubeletVersion)
	}
	for p, content := range files {
		if err := f.Host.WriteFile(p, []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	if !o.NoCNI {
		WriteCNI(t, f.Host)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tr, err := remote.Connect(ctx, remote.Config{
		Host: "127.0.0.1", Port: f.Host.Ports().WinRMHTTPS, HTTPS: true, CACertPEM: f.CA.CertPEM,
		TLSServerName: "localhost", NTLM: true, User: "Administrator", Password: f.Password,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	n := &Node{Fixture: f, Name: name, Transport: tr}
	// The golden image's containerd service, registered as the image build
	// registers it (containerd.exe --register-service).
	script := fmt.Sprintf("& '%s' --register-service --config '%s'\nif ($LASTEXITCODE) { throw 'containerd --register-service failed' }\n",
		bootstrap.ContainerdExe, bootstrap.ContainerdConf)
	if !o.ContainerdDown {
		script += "Start-Service -Name 'containerd'\n"
	}
	n.Run(t, script)
	return n
}

// Run runs a script over WinRM and fails the test when it fails.
func (n *Node) Run(t testing.TB, script string) remote.Result {
	t.Helper()
	res, err := n.Transport.Run(context.Background(), script)
	if err != nil {
		t.Fatalf("running on %s: %v", n.Name, err)
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

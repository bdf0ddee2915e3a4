package kubeletsim_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/winsimtest"
)

// noNodeWait is how long a failing kubelet is given to (wrongly) register
// after its error shows in the log.
const noNodeWait = 3 * time.Second

// TestJoinFailures: what the provider can get wrong on a host makes the
// join fail as on a real host: an error in kubelet.log and no Ready Node.
func TestJoinFailures(t *testing.T) {
	s := cluster(t)
	cs := s.ControlPlane.Client

	for _, tc := range []struct {
		name string
		host hostOptions
		// edit changes the join configuration; before runs ahead of the
		// kubelet-service step (and may replace its script).
		edit    func(*bootstrap.JoinConfig)
		before  func(t *testing.T, n *node, script string) string
		joinErr string // the join's error must contain this ("" = join succeeds)
		log     string
		// registers: the Node appears, but never Ready.
		registers bool
	}{
		{
			name: "wrong token",
			edit: func(c *bootstrap.JoinConfig) { c.BootstrapToken = "abcdef.0123456789abcdef" },
			// client-go's text for HTTP 401, as a real kubelet logs it.
			log: `"Failed to connect to apiserver" err="the server has asked for the client to provide credentials"`,
		},
		{
			name: "wrong server",
			edit: func(c *bootstrap.JoinConfig) { c.APIServer = "https://127.0.0.1:1" },
			log:  "connect: connection refused",
		},
		{
			name: "CA of another cluster",
			edit: func(c *bootstrap.JoinConfig) { c.ClusterCA = winsimtest.NewCA(t).CertPEM },
			log:  "x509: certificate signed by unknown authority",
		},
		{
			name: "missing CA file",
			before: func(t *testing.T, n *node, script string) string {
				// A bootstrap kubeconfig that names a CA file never written.
				kc, err := n.Host.ReadFile(bootstrap.BootstrapKubeconfig)
				if err != nil {
					t.Fatal(err)
				}
				cfg, err := clientcmd.Load(kc)
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range cfg.Clusters {
					c.CertificateAuthorityData, c.CertificateAuthority = nil, `C:\k\missing-ca.crt`
				}
				out, _ := clientcmd.Write(*cfg)
				if err := n.Host.WriteFile(bootstrap.BootstrapKubeconfig, out); err != nil {
					t.Fatal(err)
				}
				return script
			},
			log: `unable to read certificate-authority C:\\k\\missing-ca.crt`,
		},
		{
			name: "missing client CA file",
			before: func(t *testing.T, n *node, script string) string {
				n.run(t, `Remove-Item -LiteralPath '`+bootstrap.ClusterCAFile+`' -Force`)
				return script
			},
			log: `unable to load client CA file C:\\k\\ca.crt`,
		},
		{
			name: "removed flag",
			before: func(t *testing.T, n *node, script string) string {
				return strings.Replace(script, "--v=2", "--v=2 --network-plugin=cni --cni-bin-dir=C:\\k\\cni", 1)
			},
			joinErr: "Cannot start service kubelet",
			log:     "Error: failed to parse kubelet flag: unknown flag: --network-plugin",
		},
		{
			// The join checks the image before it writes anything.
			name:    "missing kubelet binary",
			host:    hostOptions{noKubeletBinary: true},
			joinErr: `C:\k\kubelet.exe is missing`,
		},
		{
			// The kubelet depends on containerd: a containerd that cannot
			// start (a config version it does not read) fails the kubelet's
			// start with 1068, and the kubelet never runs (Start-Service's
			// message names the service; 1068 is its inner exception).
			name: "containerd cannot start",
			host: hostOptions{containerdDown: true},
			before: func(t *testing.T, n *node, script string) string {
				if err := n.Host.WriteFile(bootstrap.ContainerdConf, []byte("version = 4\n")); err != nil {
					t.Fatal(err)
				}
				return script
			},
			joinErr: "Cannot start service kubelet on computer '.'",
		},
		{
			name:      "never ready",
			host:      hostOptions{faults: winsim.Faults{KubeletNeverReady: true}},
			log:       `"Node became not ready"`,
			registers: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			name := "win-" + strings.ToLower(strings.ReplaceAll(tc.name, " ", "-"))
			n := newNode(t, name, tc.host)
			cfg := joinConfig(s, name, createBootstrapToken(t, cs))
			if tc.edit != nil {
				tc.edit(&cfg)
			}
			var before func(string) string
			if tc.before != nil {
				before = func(script string) string { return tc.before(t, n, script) }
			}
			err := n.joinWith(t, cfg, before)
			switch {
			case tc.joinErr == "" && err != nil:
				t.Fatalf("join: %v", err)
			case tc.joinErr != "" && (err == nil || !strings.Contains(err.Error(), tc.joinErr)):
				t.Fatalf("join error = %v, want %q", err, tc.joinErr)
			}
			if tc.log != "" {
				n.waitForLog(t, tc.log, 30*time.Second)
			}
			time.Sleep(noNodeWait)
			if !tc.registers {
				expectNoNode(t, cs, name)
				return
			}
			node := waitForNode(t, cs, name, "registered", func(*corev1.Node) bool { return true })
			time.Sleep(noNodeWait)
			if nodeReady(node) {
				t.Fatalf("node %s is Ready", name)
			}
			for _, c := range node.Status.Conditions {
				if c.Type == corev1.NodeReady && !strings.Contains(c.Message, "cni plugin not initialized") {
					t.Errorf("Ready condition %+v", c)
				}
			}
		})
	}
}

// TestContainerdStops: a node whose container runtime stops goes NotReady
// with the kubelet's "container runtime is down".
func TestContainerdStops(t *testing.T) {
	s := cluster(t)
	cs := s.ControlPlane.Client
	const name = "win-runtime-down"
	n := newNode(t, name, hostOptions{})
	if err := n.join(t, joinConfig(s, name, createBootstrapToken(t, cs))); err != nil {
		t.Fatal(err)
	}
	waitForNode(t, cs, name, "Ready", nodeReady)
	// The runtime's process dies under the kubelet (the kubelet depends on
	// containerd, so Stop-Service would need -Force and stop the kubelet too).
	if !n.Host.CrashService("containerd") {
		t.Fatal("containerd was not running")
	}
	waitForNode(t, cs, name, "NotReady (runtime down)", func(node *corev1.Node) bool {
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionFalse && c.Message == "container runtime is down"
			}
		}
		return false
	})
}

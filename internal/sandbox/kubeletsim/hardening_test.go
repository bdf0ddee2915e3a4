package kubeletsim_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/remote"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// TestJoinHardensNode runs windows_node's join (and its step after Ready)
// against a simulated host with a standard local user, and checks what that
// user may do on the node afterwards: not read the kubelet's private key, not
// write the CNI directories; that the bootstrap kubeconfig is gone and the
// kubelet restarts without it; that no uploaded script is left. The controls
// first show the same user reads a key under C:\k\pki and writes into the CNI
// configuration directory of a host that was not hardened, so the refusals
// after the join are the join's doing.
func TestJoinHardensNode(t *testing.T) {
	s := cluster(t)
	const name = "win-harden"
	n := newNode(t, name, hostOptions{accounts: []winsim.LocalAccount{{Name: "plain", Password: "Plain-Passw0rd!", Groups: []string{"Users"}}}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	plain, err := remote.Connect(ctx, remote.Config{
		Host: "127.0.0.1", Port: n.Host.Ports().WinRMHTTPS, HTTPS: true, CACertPEM: n.CA.CertPEM,
		TLSServerName: "localhost", NTLM: true, User: "plain", Password: "Plain-Passw0rd!",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = plain.Close() })
	const probeKey = bootstrap.KubeletCertDir + `\probe.key`
	const cniProbe = `C:\etc\cni\net.d\plain-probe.conflist`
	n.run(t, "New-Item -ItemType Directory -Force -Path '"+bootstrap.KubeletCertDir+"' | Out-Null\nSet-Content -Path '"+probeKey+"' -Value 'probe'")

	// Controls, before the join.
	if res, err := plain.Run(ctx, "Get-Content -Path '"+probeKey+"'"); err != nil || !strings.Contains(res.Stdout, "probe") {
		t.Fatalf("control: a standard user could not read %s before hardening: %v %+v", probeKey, err, res)
	}
	if _, err := plain.Run(ctx, "Set-Content -Path '"+cniProbe+"' -Value '{}'"); err != nil {
		t.Fatalf("control: a standard user could not write %s before hardening: %v", cniProbe, err)
	}
	n.run(t, "Remove-Item -LiteralPath '"+cniProbe+"'")

	token := createBootstrapToken(t, s.ControlPlane.Client)
	if err := n.join(t, joinConfig(s, name, token)); err != nil {
		t.Fatalf("join: %v\nkubelet.log:\n%s", err, n.kubeletLog())
	}
	waitForNode(t, s.ControlPlane.Client, name, "Ready", nodeReady)
	after, err := bootstrap.AfterReadySteps()
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range after {
		n.run(t, step.Script)
	}

	t.Run("private key refused to a standard user", func(t *testing.T) {
		for _, p := range []string{bootstrap.KubeletClientCert, probeKey, bootstrap.NodeKubeconfig, bootstrap.KubeletConfigFile} {
			res, err := plain.Run(ctx, "Get-Content -Path '"+p+"'")
			var ee *remote.ExitError
			if !errors.As(err, &ee) || !strings.Contains(res.Stderr, "Access to the path '"+p+"' is denied.") {
				t.Errorf("a standard user reading %s: %v, stdout %q, stderr %q; want access denied", p, err, res.Stdout, res.Stderr)
			}
		}
	})
	t.Run("CNI directories not writable by Users", func(t *testing.T) {
		for _, p := range []string{cniProbe, `C:\opt\cni\bin\plain.exe`, `C:\etc\cni\plain.txt`} {
			res, err := plain.Run(ctx, "Set-Content -Path '"+p+"' -Value 'x'")
			if err == nil || !strings.Contains(res.Stderr, "Access to the path '"+p+"' is denied.") {
				t.Errorf("a standard user writing %s: %v, stderr %q; want access denied", p, err, res.Stderr)
			}
		}
	})
	t.Run("bootstrap kubeconfig gone", func(t *testing.T) {
		if _, err := n.Host.ReadFile(bootstrap.BootstrapKubeconfig); err == nil {
			t.Fatalf("%s is still on the node", bootstrap.BootstrapKubeconfig)
		}
		// The kubelet restarts on its own certificate.
		n.run(t, "Restart-Service -Name 'kubelet' -Force")
		n.waitForLog(t, "Kubeconfig exists and is valid, skipping bootstrap", clusterWait)
		waitForNode(t, s.ControlPlane.Client, name, "Ready", nodeReady)
	})
	t.Run("no temporary script left", func(t *testing.T) {
		// A script too long for a command line is uploaded and run as a
		// file: gone when Run returns.
		long := "# " + strings.Repeat("x", 9000) + "\nWrite-Output 'long'"
		if res := n.run(t, long); !strings.Contains(res.Stdout, "long") {
			t.Fatalf("long script: %+v", res)
		}
		if !strings.Contains(readLog(t, n), `C:\Windows\Temp\tfwin-`) {
			t.Fatal("no script was uploaded: the check below would prove nothing")
		}
		entries, err := os.ReadDir(filepath.Join(n.Host.Dir(), "fs", "C", "Windows", "Temp"))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "tfwin-") {
				t.Errorf("temporary script left on the node: %s", e.Name())
			}
		}
	})
}

// readLog is the host's scripts.log.
func readLog(t *testing.T, n *node) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(n.Host.Dir(), "scripts.log"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

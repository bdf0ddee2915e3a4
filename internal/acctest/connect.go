package acctest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/remote"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/kubeletsim/kubeletsimtest"
)

// ConnectNode opens the provider's own transport to a kubeletsimtest node
// (WinRM over HTTPS with NTLM, verified against the node's CA), closed when
// the test ends: tests of the kube and kubeletsim packages run the join
// steps over it, as windows_node runs them.
func ConnectNode(t testing.TB, n *kubeletsimtest.Node) remote.Transport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tr, err := remote.Connect(ctx, remote.Config{
		Host: "127.0.0.1", Port: n.Host.Ports().WinRMHTTPS, HTTPS: true, CACertPEM: n.CA.CertPEM,
		TLSServerName: "localhost", NTLM: true, User: "Administrator", Password: n.Password,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	return tr
}

// RunStep runs one provider step over tr as guest.Session runs it: its
// script, then the files it uploads (Step.Files: the bootstrap kubeconfig
// is never written from inside a script), each checked by its SHA-256.
func RunStep(ctx context.Context, tr remote.Transport, step bootstrap.Step) (remote.Result, error) {
	res, err := tr.Run(ctx, step.Script)
	if err != nil {
		return res, err
	}
	for _, f := range step.Files {
		sum := sha256.Sum256(f.Content)
		if _, err := tr.Upload(ctx, bytes.NewReader(f.Content), int64(len(f.Content)), hex.EncodeToString(sum[:]), f.Path); err != nil {
			return res, fmt.Errorf("uploading %s: %w", f.Path, err)
		}
	}
	return res, nil
}

package acctest

import (
	"context"
	"testing"
	"time"

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

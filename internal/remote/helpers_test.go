package remote_test

import (
	"context"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/wincluster/terraform-provider-windows/internal/remote"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/winsimtest"
)

// variant is one way of reaching a host.
type variant struct {
	name  string
	proto remote.Protocol
	https bool
	ntlm  bool
	key   bool // SSH public-key instead of password
}

// The ways of reaching a host. Basic over HTTP is not one: Config refuses
// it (TestBasicOverHTTPRefused).
var (
	httpNTLM    = variant{name: "winrm-http-ntlm", proto: remote.ProtocolWinRM, ntlm: true} // messages encrypted
	httpsBasic  = variant{name: "winrm-https-basic", proto: remote.ProtocolWinRM, https: true}
	httpsNTLM   = variant{name: "winrm-https-ntlm", proto: remote.ProtocolWinRM, https: true, ntlm: true}
	sshPassword = variant{name: "ssh-password", proto: remote.ProtocolSSH}
	sshKey      = variant{name: "ssh-key", proto: remote.ProtocolSSH, key: true}
	variants    = []variant{httpNTLM, httpsBasic, httpsNTLM, sshPassword, sshKey}
)

// startHost starts a simulated host whose WinRM service also allows Basic
// (`winrm set winrm/config/service/auth @{Basic="true"}`), for httpsBasic;
// everything else of its service is a stock Windows Server's.
func startHost(t testing.TB, edit func(*winsim.HostConfig)) *winsimtest.Fixture {
	t.Helper()
	return winsimtest.StartHost(t, func(c *winsim.HostConfig) {
		svc := winsim.StockWinRM()
		svc.Basic = true
		c.WinRM = &svc
		if edit != nil {
			edit(c)
		}
	})
}

// config builds the Config that reaches f's host with variant v.
func (v variant) config(f *winsimtest.Fixture) remote.Config {
	p := f.Host.Ports()
	cfg := remote.Config{
		Protocol: v.proto, Host: "127.0.0.1", User: "Administrator", Password: f.Password,
		HTTPS: v.https, NTLM: v.ntlm, CACertPEM: f.CA.CertPEM,
		Backoff: remote.Backoff{Initial: 50 * time.Millisecond, Max: 500 * time.Millisecond},
	}
	switch {
	case v.proto == remote.ProtocolSSH:
		cfg.Port = p.SSH
		cfg.HostKey = string(ssh.MarshalAuthorizedKey(f.HostKey))
		if v.key {
			cfg.Password = ""
			cfg.PrivateKeyPEM = f.ClientKeyPEM
		}
	case v.https:
		cfg.Port = p.WinRMHTTPS
	default:
		cfg.Port = p.WinRM
	}
	return cfg
}

func connect(t testing.TB, cfg remote.Config) remote.Transport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tr, err := remote.Connect(ctx, cfg)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	return tr
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

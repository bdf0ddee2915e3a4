// Package winsimtest starts simulated Windows hosts for tests: free ports on
// 127.0.0.1, an HTTPS certificate from a throwaway CA, an SSH host key and a
// client key, a temporary Dir.
package winsimtest

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/pki"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// Password is the administrator password of test hosts.
const Password = "Sim-P@ssw0rd!"

// NewCA makes a throwaway certificate authority.
func NewCA(t testing.TB) *pki.CA {
	t.Helper()
	ca, err := pki.NewCA("winsim test CA")
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// Fixture is a running test host and the secrets to reach it.
type Fixture struct {
	Host         *winsim.Host
	CA           *pki.CA
	Password     string
	ClientKeyPEM []byte        // authorized for the administrator over SSH
	HostKey      ssh.PublicKey // the SSH host key
}

// NewSSHKey returns a private key in PEM and its public key.
func NewSSHKey(t testing.TB) ([]byte, ssh.PublicKey) {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(key, "")
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(block), signer.PublicKey()
}

// StartHost starts a host on free ports of 127.0.0.1 and stops it when the
// test ends. edit may change the configuration before the start.
//
// The host is a prepared one, not a clone of a stock template: its WinRM
// HTTPS listener has a certificate from a throwaway CA, as an administrator
// who set one up would have, so the simulator's own tests can drive every
// listener. Clones in the sandbox get only what their template's disk has.
func StartHost(t testing.TB, edit func(*winsim.HostConfig)) *Fixture {
	t.Helper()
	ca := NewCA(t)
	certPEM, keyPEM, err := ca.IssueServing("win-test", "localhost", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	clientKey, clientPub := NewSSHKey(t)
	hostKeyPEM, hostPub := NewSSHKey(t)
	cfg := winsim.HostConfig{
		ComputerName:   "WIN-TEST",
		IP:             "127.0.0.1",
		AdminPassword:  Password,
		WindowsBuild:   "10.0.20348",
		UBR:            2340,
		Dir:            t.TempDir(),
		TLSCertPEM:     certPEM,
		TLSKeyPEM:      keyPEM,
		SSHHostKeyPEM:  hostKeyPEM,
		AuthorizedKeys: ssh.MarshalAuthorizedKey(clientPub),
		Ports:          &winsim.Ports{},
		RebootDelay:    500 * time.Millisecond,
		// Windows waits 30 s for a service to report Running; tests of a
		// service that never does should not.
		ServiceStartTimeout: 2 * time.Second,
	}
	if edit != nil {
		edit(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h, err := winsim.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Stop() })
	return &Fixture{Host: h, CA: ca, Password: cfg.AdminPassword, ClientKeyPEM: clientKey, HostKey: hostPub}
}

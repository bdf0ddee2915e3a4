// Package winsimtest starts simulated Windows hosts for tests: free ports on
// 127.0.0.1, an HTTPS certificate from a throwaway CA, an SSH host key and a
// client key, a temporary Dir.
package winsimtest

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/wincluster/terraform-provider-windows/internal/winsim"
)

// Password is the administrator password of test hosts.
const Password = "Sim-P@ssw0rd!"

// CA is a throwaway certificate authority.
type CA struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	CertPEM []byte
}

// NewCA makes a CA.
func NewCA(t testing.TB) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "winsim test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &CA{cert: cert, key: key, CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// Issue signs a server certificate for the names and IPs.
func (ca *CA) Issue(t testing.TB, names []string, ips []string) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: names[0]},
		DNSNames:     names,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, ip := range ips {
		tmpl.IPAddresses = append(tmpl.IPAddresses, net.ParseIP(ip))
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})
}

// Fixture is a running test host and the secrets to reach it.
type Fixture struct {
	Host         *winsim.Host
	CA           *CA
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
func StartHost(t testing.TB, edit func(*winsim.HostConfig)) *Fixture {
	t.Helper()
	ca := NewCA(t)
	certPEM, keyPEM := ca.Issue(t, []string{"win-test", "localhost"}, []string{"127.0.0.1"})
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

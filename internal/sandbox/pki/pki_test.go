package pki

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"slices"
	"testing"
)

func parseCert(t *testing.T, certPEM []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(certPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		t.Fatalf("not a PEM certificate: %q", certPEM)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func TestIssueServingVerifiesForEveryHost(t *testing.T) {
	ca, err := NewCA("test-ca")
	if err != nil {
		t.Fatal(err)
	}
	hosts := []string{"127.0.0.7", "win-0", "win-0.example.test"}
	certPEM, keyPEM, err := ca.IssueServing(hosts...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
		t.Fatalf("certificate and key do not match: %v", err)
	}
	cert := parseCert(t, certPEM)
	for _, h := range hosts {
		_, err := cert.Verify(x509.VerifyOptions{
			DNSName: h, Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		})
		if err != nil {
			t.Errorf("verify for %s: %v", h, err)
		}
	}
	if err := cert.VerifyHostname("127.0.0.8"); err == nil {
		t.Error("certificate verifies for an address it was not issued for")
	}
	// A certificate from another CA must not verify.
	other, _ := NewCA("other")
	if _, err := cert.Verify(x509.VerifyOptions{Roots: other.Pool()}); err == nil {
		t.Error("certificate verifies against an unrelated CA")
	}
}

func TestGenerateBundle(t *testing.T) {
	dir := t.TempDir()
	b, err := Generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(b.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatal("CA file holds no certificate")
	}

	api := readPair(t, b.APIServer)
	if _, err := api.Verify(x509.VerifyOptions{DNSName: "kubernetes.default.svc.cluster.local", Roots: roots}); err != nil {
		t.Errorf("apiserver certificate: %v", err)
	}
	for _, ip := range []string{"127.0.0.1", "10.96.0.1"} {
		if !slices.ContainsFunc(api.IPAddresses, func(a net.IP) bool { return a.Equal(net.ParseIP(ip)) }) {
			t.Errorf("apiserver certificate lacks IP SAN %s: %v", ip, api.IPAddresses)
		}
	}
	for _, name := range []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"} {
		if !slices.Contains(api.DNSNames, name) {
			t.Errorf("apiserver certificate lacks DNS SAN %s: %v", name, api.DNSNames)
		}
	}

	vc := readPair(t, b.VCSim)
	if _, err := vc.Verify(x509.VerifyOptions{DNSName: "127.0.0.1", Roots: roots}); err != nil {
		t.Errorf("vcsim certificate: %v", err)
	}

	clients := []struct {
		pair Pair
		cn   string
		orgs []string
	}{
		{b.Admin, "kubernetes-admin", []string{"system:masters"}},
		{b.ControllerManager, "system:kube-controller-manager", nil},
		{b.Scheduler, "system:kube-scheduler", nil},
	}
	for _, c := range clients {
		cert := readPair(t, c.pair)
		if cert.Subject.CommonName != c.cn || !slices.Equal(cert.Subject.Organization, c.orgs) {
			t.Errorf("client certificate subject = %v, want CN=%s O=%v", cert.Subject, c.cn, c.orgs)
		}
		if _, err := cert.Verify(x509.VerifyOptions{
			Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}); err != nil {
			t.Errorf("client certificate %s: %v", c.cn, err)
		}
	}

	for _, f := range []string{b.ServiceAccountKeyFile, b.ServiceAccountPubFile, b.CAKeyFile} {
		if _, err := os.Stat(f); err != nil {
			t.Error(err)
		}
	}
	if st, _ := os.Stat(b.CAKeyFile); st.Mode().Perm() != 0o600 {
		t.Errorf("CA key mode = %v, want 0600", st.Mode().Perm())
	}
}

// readPair reads a pair back from its files and checks that they match.
func readPair(t *testing.T, p Pair) *x509.Certificate {
	t.Helper()
	if _, err := tls.LoadX509KeyPair(p.CertFile, p.KeyFile); err != nil {
		t.Fatalf("loading %s: %v", p.CertFile, err)
	}
	data, err := os.ReadFile(p.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	return parseCert(t, data)
}

// TestSelfSigned: the certificate verifies for its hosts when trusted itself
// (as a client pinning a fresh WinRM listener's certificate does), for no
// other host, and is its own issuer.
func TestSelfSigned(t *testing.T) {
	certPEM, keyPEM, err := SelfSigned("WIN-0", "", "127.0.0.9")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
		t.Fatalf("certificate and key do not match: %v", err)
	}
	cert := parseCert(t, certPEM)
	if cert.Subject.CommonName != "WIN-0" || cert.Issuer.String() != cert.Subject.String() || cert.IsCA {
		t.Fatalf("subject %q issuer %q IsCA %v: want a self-signed leaf for WIN-0", cert.Subject, cert.Issuer, cert.IsCA)
	}
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	for _, h := range []string{"WIN-0", "127.0.0.9"} {
		if _, err := cert.Verify(x509.VerifyOptions{DNSName: h, Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("verify for %s: %v", h, err)
		}
	}
	if err := cert.VerifyHostname("127.0.0.8"); err == nil {
		t.Error("certificate verifies for an address it was not issued for")
	}
	if _, _, err := SelfSigned(""); err == nil {
		t.Error("a certificate for no host was made")
	}
}

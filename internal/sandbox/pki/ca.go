// Package pki is the project's one certificate authority and the
// certificates it signs. The sandbox's CA (Generate, Bundle) signs every
// sandbox endpoint (vcsim, etcd, kube-apiserver, simulated Windows hosts)
// and is also the Kubernetes cluster CA, so a single file (SANDBOX_CA_FILE)
// verifies everything in the sandbox; tests make throwaway CAs with NewCA;
// a simulated host's fresh WinRM HTTPS listener has a SelfSigned
// certificate, as a real one does. It imports nothing of this project, so
// any package (winsim, sandbox, their tests) may use it.
package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"slices"
	"time"
)

const (
	// Validity is how long sandbox certificates last. A sandbox lives for
	// minutes or hours; a year keeps long-running demos working.
	Validity = 365 * 24 * time.Hour
	// clockSkew backdates NotBefore so that a freshly issued certificate is
	// valid even if a verifier's clock lags slightly.
	clockSkew = time.Hour
)

// CA is the sandbox certificate authority. It is safe for concurrent use.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
	// CertPEM is Cert in PEM form, the content of SANDBOX_CA_FILE.
	CertPEM []byte
}

// NewCA generates a self-signed ECDSA P-256 certificate authority.
func NewCA(commonName string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating CA key: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: commonName, Organization: []string{"terraform-provider-windows sandbox"}},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              now.Add(Validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("self-signing CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parsing CA certificate: %w", err)
	}
	return &CA{Cert: cert, Key: key, CertPEM: encodeCert(der)}, nil
}

// KeyPEM returns the CA's private key in PEM form (PKCS #8). The controller
// manager needs it to sign kubelet certificates.
func (ca *CA) KeyPEM() ([]byte, error) {
	return encodeKey(ca.Key)
}

// Pool returns a certificate pool holding only the CA.
func (ca *CA) Pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	return pool
}

// IssueServing issues a TLS serving certificate for hosts, each an IP address
// or a DNS name; the first one is also the subject's common name.
func (ca *CA) IssueServing(hosts ...string) (certPEM, keyPEM []byte, err error) {
	if len(hosts) == 0 {
		return nil, nil, fmt.Errorf("issuing serving certificate: no hosts given")
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: hosts[0]},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	addSANs(tmpl, hosts)
	return ca.issue(tmpl)
}

// IssuePeer issues a certificate valid both for serving hosts and as a client
// certificate, as etcd members need.
func (ca *CA) IssuePeer(commonName string, hosts ...string) (certPEM, keyPEM []byte, err error) {
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: commonName},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	addSANs(tmpl, hosts)
	return ca.issue(tmpl)
}

// IssueClient issues a client certificate. Kubernetes reads the common name as
// the user name and the organizations as groups.
func (ca *CA) IssueClient(commonName string, organizations ...string) (certPEM, keyPEM []byte, err error) {
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: commonName, Organization: organizations},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	return ca.issue(tmpl)
}

// ServingCertificate is IssueServing in the form a tls.Config takes.
func (ca *CA) ServingCertificate(hosts ...string) (tls.Certificate, error) {
	certPEM, keyPEM, err := ca.IssueServing(hosts...)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(certPEM, keyPEM)
}

// SelfSigned makes a self-signed TLS serving certificate for hosts (IP
// addresses or DNS names; empty ones are skipped), the first also its common
// name: what a WinRM HTTPS listener created with New-SelfSignedCertificate
// serves, trusted by nobody until its certificate is.
func SelfSigned(hosts ...string) (certPEM, keyPEM []byte, err error) {
	hosts = slices.DeleteFunc(slices.Clone(hosts), func(h string) bool { return h == "" })
	if len(hosts) == 0 {
		return nil, nil, fmt.Errorf("self-signing a serving certificate: no hosts given")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating key for %q: %w", hosts[0], err)
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: hosts[0]},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	addSANs(tmpl, hosts)
	return sign(tmpl, tmpl, key, key)
}

func (ca *CA) issue(tmpl *x509.Certificate) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating key for %q: %w", tmpl.Subject.CommonName, err)
	}
	return sign(tmpl, ca.Cert, ca.Key, key)
}

// sign completes tmpl (serial, validity) and signs it for key with the
// parent's signer.
func sign(tmpl, parent *x509.Certificate, parentKey, key crypto.Signer) (certPEM, keyPEM []byte, err error) {
	if tmpl.SerialNumber, err = newSerial(); err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl.NotBefore = now.Add(-clockSkew)
	tmpl.NotAfter = now.Add(Validity)
	tmpl.BasicConstraintsValid = true
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), parentKey)
	if err != nil {
		return nil, nil, fmt.Errorf("signing certificate for %q: %w", tmpl.Subject.CommonName, err)
	}
	keyPEM, err = encodeKey(key)
	if err != nil {
		return nil, nil, err
	}
	return encodeCert(der), keyPEM, nil
}

func addSANs(tmpl *x509.Certificate, hosts []string) {
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
}

// newSerial returns a random 128-bit serial number: certificates are issued
// concurrently and must never share one.
func newSerial() (*big.Int, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("generating serial number: %w", err)
	}
	return serial, nil
}

func encodeCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func encodeKey(key crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encoding private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

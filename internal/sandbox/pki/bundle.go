package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
)

// loopbackHosts are the names of every endpoint the sandbox serves on loopback.
var loopbackHosts = []string{"127.0.0.1", "localhost"}

// APIServerHosts are the kube-apiserver's serving certificate SANs: loopback,
// where the sandbox serves it, and the names and first service IP that
// in-cluster clients use, as kubeadm issues them.
var APIServerHosts = []string{
	"127.0.0.1", "localhost", "10.96.0.1",
	"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local",
}

// Kubernetes identities of the control-plane clients.
const (
	AdminUser             = "kubernetes-admin"
	AdminGroup            = "system:masters"
	ControllerManagerUser = "system:kube-controller-manager"
	SchedulerUser         = "system:kube-scheduler"
	// APIServerKubeletClientUser is the identity the API server presents to
	// kubelets (logs, exec), with kubeadm's group for it.
	APIServerKubeletClientUser  = "kube-apiserver-kubelet-client"
	APIServerKubeletClientGroup = "kubeadm:cluster-admins"
	// FrontProxyClientUser is the identity the API server presents to
	// aggregated API servers; only it may assert users in request headers.
	FrontProxyClientUser = "front-proxy-client"
)

// Pair is a certificate and its key, in PEM form and as files.
type Pair struct {
	CertPEM, KeyPEM   []byte
	CertFile, KeyFile string
}

// Bundle is every credential the sandbox uses, written under Dir.
type Bundle struct {
	Dir               string
	CA                *CA
	CAFile, CAKeyFile string

	VCSim                  Pair // vcsim's serving certificate
	Etcd                   Pair // etcd's serving (and peer) certificate
	APIServer              Pair // kube-apiserver's serving certificate
	APIServerEtcdClient    Pair // kube-apiserver -> etcd
	APIServerKubeletClient Pair // kube-apiserver -> kubelets
	FrontProxyClient       Pair // kube-apiserver -> aggregated API servers
	Admin                  Pair // system:masters
	ControllerManager      Pair
	Scheduler              Pair

	// Service-account token signing keys (private key, public key).
	ServiceAccountKeyFile, ServiceAccountPubFile string
}

// Generate creates a new CA and every sandbox credential and writes them as
// PEM files under dir (created if missing). Keys are written 0600.
//
// The serving certificates here are the lab's own endpoints', as a real
// site has them: vCenter's (VMCA signs it on a real vCenter, and the
// provider verifies it unless told otherwise) and the API server's
// (kubeadm's CA). No guest gets one: a guest's listeners and certificates
// come from its template's disk (internal/sandbox/vmtools, templates.go).
func Generate(dir string) (*Bundle, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating PKI directory: %w", err)
	}
	ca, err := NewCA("sandbox-ca")
	if err != nil {
		return nil, err
	}
	b := &Bundle{Dir: dir, CA: ca, CAFile: filepath.Join(dir, "ca.crt"), CAKeyFile: filepath.Join(dir, "ca.key")}
	caKey, err := ca.KeyPEM()
	if err != nil {
		return nil, err
	}
	if err := writePEM(b.CAFile, ca.CertPEM, 0o644); err != nil {
		return nil, err
	}
	if err := writePEM(b.CAKeyFile, caKey, 0o600); err != nil {
		return nil, err
	}

	issues := []struct {
		name  string
		into  *Pair
		issue func() ([]byte, []byte, error)
	}{
		{"vcsim", &b.VCSim, func() ([]byte, []byte, error) { return ca.IssueServing(loopbackHosts...) }},
		{"etcd", &b.Etcd, func() ([]byte, []byte, error) { return ca.IssuePeer("etcd", loopbackHosts...) }},
		{"apiserver", &b.APIServer, func() ([]byte, []byte, error) { return ca.IssueServing(APIServerHosts...) }},
		{"apiserver-etcd-client", &b.APIServerEtcdClient, func() ([]byte, []byte, error) {
			return ca.IssueClient("kube-apiserver-etcd-client")
		}},
		{"apiserver-kubelet-client", &b.APIServerKubeletClient, func() ([]byte, []byte, error) {
			return ca.IssueClient(APIServerKubeletClientUser, APIServerKubeletClientGroup)
		}},
		{"front-proxy-client", &b.FrontProxyClient, func() ([]byte, []byte, error) { return ca.IssueClient(FrontProxyClientUser) }},
		{"admin", &b.Admin, func() ([]byte, []byte, error) { return ca.IssueClient(AdminUser, AdminGroup) }},
		{"controller-manager", &b.ControllerManager, func() ([]byte, []byte, error) { return ca.IssueClient(ControllerManagerUser) }},
		{"scheduler", &b.Scheduler, func() ([]byte, []byte, error) { return ca.IssueClient(SchedulerUser) }},
	}
	for _, is := range issues {
		certPEM, keyPEM, err := is.issue()
		if err != nil {
			return nil, fmt.Errorf("issuing %s certificate: %w", is.name, err)
		}
		*is.into = Pair{
			CertPEM: certPEM, KeyPEM: keyPEM,
			CertFile: filepath.Join(dir, is.name+".crt"), KeyFile: filepath.Join(dir, is.name+".key"),
		}
		if err := writePEM(is.into.CertFile, certPEM, 0o644); err != nil {
			return nil, err
		}
		if err := writePEM(is.into.KeyFile, keyPEM, 0o600); err != nil {
			return nil, err
		}
	}

	if err := b.writeServiceAccountKeys(); err != nil {
		return nil, err
	}
	return b, nil
}

// writeServiceAccountKeys writes the key pair that signs service-account
// tokens (ES256; kube-apiserver accepts ECDSA signing keys).
func (b *Bundle) writeServiceAccountKeys() error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generating service-account key: %w", err)
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return fmt.Errorf("encoding service-account public key: %w", err)
	}
	b.ServiceAccountKeyFile = filepath.Join(b.Dir, "sa.key")
	b.ServiceAccountPubFile = filepath.Join(b.Dir, "sa.pub")
	if err := writePEM(b.ServiceAccountKeyFile, keyPEM, 0o600); err != nil {
		return err
	}
	return writePEM(b.ServiceAccountPubFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o644)
}

func writePEM(path string, data []byte, mode os.FileMode) error {
	if err := os.WriteFile(path, data, mode); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

package winsim

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1" //nolint:gosec // a certificate's Windows thumbprint is its SHA-1 hash: an identifier, not a security check
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/pwsh"
)

// certStoreFile is the machine's personal certificate store
// (Cert:\LocalMachine\My) as the disk holds it: on Windows the certificates
// are in the registry (HKLM\SOFTWARE\Microsoft\SystemCertificates\MY) and
// their private keys under C:\ProgramData\Microsoft\Crypto, both on the
// system disk, so a clone of the disk carries them. The simulator keeps
// both in one file beside the registry's; nothing the host models reads a
// private key out of it (Export-PfxCertificate, certutil -exportPFX and
// the .NET key APIs are not modelled), so a key made on a guest stays on
// that guest's disk.
const certStoreFile = "certstore.json"

// storedCert is one certificate of the store with its private key.
type storedCert struct {
	Thumbprint   string // SHA-1 of the DER, upper-case hex, as Windows shows it
	FriendlyName string `json:",omitempty"`
	CertPEM      []byte
	KeyPEM       []byte
	// KeyExportPolicy is New-SelfSignedCertificate's: NonExportable,
	// ExportableEncrypted (its default) or Exportable.
	KeyExportPolicy string
}

func (h *Host) certStore() ([]storedCert, error) { return readCertStore(h.cfg.Dir) }

func readCertStore(dir string) ([]storedCert, error) {
	b, err := os.ReadFile(filepath.Join(dir, certStoreFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var certs []storedCert
	return certs, json.Unmarshal(b, &certs)
}

func (h *Host) saveCertStore(certs []storedCert) error {
	b, err := json.MarshalIndent(certs, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(h.cfg.Dir, certStoreFile), b, 0o600)
}

// storeCert finds a certificate of Cert:\LocalMachine\My by thumbprint.
func (h *Host) storeCert(thumbprint string) (storedCert, bool) {
	return findStoreCert(h.cfg.Dir, thumbprint)
}

func findStoreCert(dir, thumbprint string) (storedCert, bool) {
	certs, err := readCertStore(dir)
	if err != nil {
		return storedCert{}, false
	}
	for _, c := range certs {
		if strings.EqualFold(c.Thumbprint, strings.TrimSpace(thumbprint)) {
			return c, true
		}
	}
	return storedCert{}, false
}

// thumbprint is a certificate's Windows thumbprint.
func thumbprint(der []byte) string {
	sum := sha1.Sum(der) //nolint:gosec // the Windows thumbprint, an identifier
	return strings.ToUpper(hex.EncodeToString(sum[:]))
}

// newSelfSigned makes what New-SelfSignedCertificate makes with its
// defaults (learn.microsoft.com/powershell/module/pki/new-selfsignedcertificate):
// an RSA 2048-bit key (-KeyAlgorithm RSA, -KeyLength 2048), SHA-256
// signature, the first -DnsName as the subject's CN and every -DnsName in
// the subject alternative name, the Client and Server Authentication EKUs
// of -Type SSLServerAuthentication, valid from now for one year (-NotAfter's
// default).
func newSelfSigned(dnsNames []string, now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: dnsNames[0]},
		DNSNames:              dnsNames,
		NotBefore:             now.Add(-10 * time.Minute),
		NotAfter:              now.AddDate(1, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), nil
}

// certObject is the X509Certificate2 the certificate provider outputs.
func certObject(c storedCert) (*pwsh.Object, error) {
	block, _ := pem.Decode(c.CertPEM)
	if block == nil {
		return nil, errors.New("the store holds no PEM certificate")
	}
	x, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, err
	}
	names := make([]any, 0, len(x.DNSNames))
	for _, n := range x.DNSNames {
		names = append(names, n)
	}
	o := NewObject("System.Security.Cryptography.X509Certificates.X509Certificate2")
	o.Str = "[Subject]\r\n  CN=" + x.Subject.CommonName + "\r\n\r\n[Thumbprint]\r\n  " + c.Thumbprint
	return o.Set("Thumbprint", c.Thumbprint).Set("Subject", "CN="+x.Subject.CommonName).Set("Issuer", "CN="+x.Issuer.CommonName).
		Set("DnsNameList", names).Set("FriendlyName", c.FriendlyName).Set("HasPrivateKey", true).
		Set("NotBefore", x.NotBefore).Set("NotAfter", x.NotAfter).Set("RawData", block.Bytes).
		Set("PSPath", `Microsoft.PowerShell.Security\Certificate::LocalMachine\My\`+c.Thumbprint), nil
}

const pkiDocs = "https://learn.microsoft.com/en-us/powershell/module/pki/"

func certCmdlets() []*Cmdlet {
	return []*Cmdlet{{Name: "New-SelfSignedCertificate", Class: "Microsoft.CertificateServices.Commands.NewSelfSignedCertificateCommand", ShouldProcess: true,
		Source: pkiDocs + "new-selfsignedcertificate",
		Behaviour: "makes an RSA 2048 key and a self-signed certificate (CN = the first -DnsName, every -DnsName in the SAN, Client and Server Authentication, one year) " +
			"in Cert:\\LocalMachine\\My with its key, which stays on the disk (nothing modelled exports it); outputs the X509Certificate2 (Thumbprint, RawData, DnsNameList). " +
			"Only -CertStoreLocation Cert:\\LocalMachine\\My and -DnsName are modelled: without either the call is refused",
		Params: []*Param{P("DnsName", "System.String[]", -1), P("CertStoreLocation", "System.String", -1),
			P("KeyExportPolicy", "Microsoft.CertificateServices.Commands.KeyExportPolicy[]", -1, Enum("NonExportable", "ExportableEncrypted", "Exportable")),
			P("FriendlyName", "System.String", -1), P("Subject", "System.String", -1, Unmodelled), P("KeyAlgorithm", "System.String", -1, Unmodelled),
			P("KeyLength", "System.Int32", -1, Unmodelled), P("NotAfter", "System.DateTime", -1, Unmodelled), P("NotBefore", "System.DateTime", -1, Unmodelled),
			P("Type", "Microsoft.CertificateServices.Commands.CertificateType", -1, Unmodelled), P("KeyUsage", "Microsoft.CertificateServices.Commands.KeyUsage[]", -1, Unmodelled),
			P("TextExtension", "System.String[]", -1, Unmodelled), P("Signer", "Microsoft.CertificateServices.Commands.Certificate", -1, Unmodelled),
			P("CloneCert", "Microsoft.CertificateServices.Commands.Certificate", -1, Unmodelled), P("Provider", "System.String", -1, Unmodelled),
			P("KeySpec", "Microsoft.CertificateServices.Commands.KeySpec", -1, Unmodelled), P("HashAlgorithm", "System.String", -1, Unmodelled),
			P("KeyProtection", "Microsoft.CertificateServices.Commands.KeyProtection[]", -1, Unmodelled), P("Container", "System.String", -1, Unmodelled),
			P("SuppressOid", "System.String[]", -1, Unmodelled), P("TestRoot", "SwitchParameter", -1, Unmodelled), P("ExistingKey", "SwitchParameter", -1, Unmodelled)},
		Run: func(c *Call) error {
			store := strings.TrimRight(strings.ReplaceAll(c.Str("CertStoreLocation"), "/", `\`), `\`)
			if !strings.EqualFold(store, `Cert:\LocalMachine\My`) {
				return c.Unmodelled("New-SelfSignedCertificate without -CertStoreLocation Cert:\\LocalMachine\\My (another store)")
			}
			names := c.Strs("DnsName")
			if len(names) == 0 {
				return c.Unmodelled("New-SelfSignedCertificate without -DnsName")
			}
			policy := "ExportableEncrypted" // the cmdlet's default
			if policies := c.Strs("KeyExportPolicy"); len(policies) == 1 {
				policy = policies[0]
			} else if len(policies) > 1 {
				return c.Unmodelled("several -KeyExportPolicy values")
			}
			h := ps(c).h
			certPEM, keyPEM, err := newSelfSigned(names, time.Now())
			if err != nil {
				return c.Throw(c.Fail(err.Error(), "NotSpecified", "", "CryptographicException", "System.Security.Cryptography.CryptographicException,Microsoft.CertificateServices.Commands.NewSelfSignedCertificateCommand", "System.Security.Cryptography.CryptographicException"))
			}
			block, _ := pem.Decode(certPEM)
			sc := storedCert{Thumbprint: thumbprint(block.Bytes), FriendlyName: c.Str("FriendlyName"), CertPEM: certPEM, KeyPEM: keyPEM, KeyExportPolicy: policy}
			h.certMu.Lock()
			certs, err := h.certStore()
			if err == nil {
				err = h.saveCertStore(append(certs, sc))
			}
			h.certMu.Unlock()
			if err != nil {
				return c.Throw(c.Fail(err.Error(), "WriteError", "", "IOException", "System.IO.IOException,Microsoft.CertificateServices.Commands.NewSelfSignedCertificateCommand", "System.IO.IOException"))
			}
			o, err := certObject(sc)
			if err != nil {
				return err
			}
			c.Write(o)
			return nil
		}}}
}

// httpsCertificate is the certificate the HTTPS listener serves now: the
// listener's (its thumbprint's, from the store), else the configured or
// generated one (newTLSConfig). It is read at each handshake, so a listener
// given another certificate (Set-WSManInstance) serves it to the next
// connection, as HTTP.sys's SSL binding does.
func (h *Host) httpsCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	h.certMu.Lock()
	defer h.certMu.Unlock()
	if h.httpsCert == nil {
		return nil, errors.New("no certificate bound to the HTTPS listener")
	}
	return h.httpsCert, nil
}

// bindStoreCert makes the HTTPS listener serve the store's certificate of
// that thumbprint.
func (h *Host) bindStoreCert(thumb string) error {
	sc, ok := h.storeCert(thumb)
	if !ok {
		return fmt.Errorf("no certificate %s in Cert:\\LocalMachine\\My", thumb)
	}
	cert, err := tls.X509KeyPair(sc.CertPEM, sc.KeyPEM)
	if err != nil {
		return err
	}
	h.certMu.Lock()
	h.httpsCert = &cert
	h.certMu.Unlock()
	return nil
}

package remote

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Pinned WinRM HTTPS certificates. A guest whose HTTPS listener the
// provider created over an authenticated channel (bootstrap.HTTPSListenerStep,
// run over vmtools) has a self-signed certificate made on it, with a private
// key that never left it; the provider records the certificate's SHA-256
// and requires exactly that certificate from then on, as it does an SSH
// host key (ssh_hostkeys.go).
//
// No chain and no name are verified against a pin, deliberately: the pin
// names one certificate, and only the guest holds its key, so a handshake
// that presents it (and proves the key, which TLS does) is that guest.
// A name check would add nothing the pin does not say (the name is what
// the guest wrote into its own certificate) and would break on a guest
// whose DHCP address changed; a validity-period check would break a node
// older than the certificate's year, which SSH host keys, having no
// expiry, never do.

// CertificateSHA256 is the fingerprint a pin holds: the SHA-256 of the
// certificate's DER, lower-case hex.
func CertificateSHA256(der []byte) string {
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}

// ParseCertificateSHA256 reads a fingerprint as the pin keeps it, or as
// openssl prints it (upper case, colon-separated).
func ParseCertificateSHA256(s string) (string, error) {
	h := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(s), ":", ""))
	if b, err := hex.DecodeString(h); err != nil || len(b) != sha256.Size {
		return "", errors.New("not a SHA-256 fingerprint: 64 hexadecimal digits (colons allowed)")
	}
	return h, nil
}

// CertificatePinError is a WinRM HTTPS certificate that is not the pinned
// one. It is never retried.
type CertificatePinError struct {
	Address string
	Want    string // the pinned SHA-256
	Got     string // the SHA-256 of the certificate presented
	Subject string // the presented certificate's subject, for the diagnostic
}

func (e *CertificatePinError) Error() string {
	return fmt.Sprintf("WINRM CERTIFICATE MISMATCH for %s: the certificate pinned is SHA-256 %s but the host presented %s (%s); "+
		"this may be an attack (man in the middle) or a listener given another certificate, and the connection was refused",
		e.Address, e.Want, e.Got, e.Subject)
}

// pinTLS makes tlsCfg accept exactly the certificate whose SHA-256 is pin.
func pinTLS(tlsCfg *tls.Config, address, pin string) error {
	want, err := ParseCertificateSHA256(pin)
	if err != nil {
		return fmt.Errorf("remote: CertSHA256: %w", err)
	}
	// The chain and name checks are replaced, not skipped: VerifyConnection
	// runs on every handshake (resumed ones too) and refuses any other
	// certificate. See the package comment above for why no name is checked.
	tlsCfg.InsecureSkipVerify = true //nolint:gosec // verification is VerifyConnection's: the pinned certificate only
	tlsCfg.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return &CertificatePinError{Address: address, Want: want, Got: "(none)"}
		}
		leaf := cs.PeerCertificates[0]
		if got := CertificateSHA256(leaf.Raw); got != want {
			return &CertificatePinError{Address: address, Want: want, Got: got, Subject: leaf.Subject.String()}
		}
		return nil
	}
	return nil
}

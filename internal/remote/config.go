package remote

import (
	"errors"
	"time"
)

// Protocol selects the transport.
type Protocol string

// Protocols.
const (
	ProtocolWinRM Protocol = "winrm"
	ProtocolSSH   Protocol = "ssh"
	// ProtocolVMTools runs scripts through vCenter's guest operations
	// (VMware Tools in the guest; vmtools.go): Guest says which VM.
	ProtocolVMTools Protocol = "vmtools"
)

// Default settings.
const (
	DefaultOperationTimeout = 5 * time.Second
	DefaultDialTimeout      = 10 * time.Second
	DefaultConnectTimeout   = 10 * time.Minute
	DefaultBackoffInitial   = 250 * time.Millisecond
	DefaultBackoffMax       = 10 * time.Second
)

// Config says how to reach a host. Secrets in it are never logged.
type Config struct {
	Protocol Protocol // winrm (default), ssh or vmtools
	Host     string   // the guest's address; for vmtools only named in errors
	Port     int      // default 5986 (WinRM HTTPS), 5985 (WinRM HTTP), 22 (SSH)
	User     string
	Password string

	// WinRM. The provider defaults HTTPS to true: plain HTTP only when asked.
	HTTPS         bool
	CACertPEM     []byte // CA that signed the listener's certificate; system roots when empty
	Insecure      bool   // skip certificate verification: an explicit opt-in
	TLSServerName string // name to verify instead of Host
	// CertSHA256 pins the listener's certificate (winrm_pin.go): exactly
	// the certificate of this SHA-256 (hex) is accepted, with no chain or
	// name check; CACertPEM, Insecure and TLSServerName do not apply.
	CertSHA256 string
	// NTLM (Negotiate) instead of Basic authentication. Over HTTP it is
	// required, and every message is encrypted with the connection's NTLM
	// session ([MS-WSMV] 2.2.9.1.1), as a stock Windows listener
	// (AllowUnencrypted=false) requires.
	NTLM bool
	// OperationTimeout is the WS-Management OperationTimeout: how long one
	// Receive poll may wait on the host, and so how late a cancellation can be
	// noticed by the host. Default 5s.
	OperationTimeout time.Duration

	// SSH. Host keys are never accepted unchecked: HostKey is the key the
	// host must present (authorized_keys format: pinned by the user, or
	// recorded at an earlier connection); without it HostKeys records the
	// key seen first and refuses any other from then on (trust on first
	// use).
	PrivateKeyPEM []byte
	HostKey       string
	HostKeys      *HostKeys

	// vmtools: the vCenter session and the VM whose guest operations run
	// the scripts (no Host, Port or TLS settings).
	Guest *GuestOperations

	DialTimeout    time.Duration // one TCP/TLS/SSH handshake; default 10s
	ConnectTimeout time.Duration // Connect's bound when ctx has no deadline; default 10m
	Backoff        Backoff
}

// Backoff is the retry schedule of Connect: Initial, doubling up to Max.
type Backoff struct {
	Initial time.Duration
	Max     time.Duration
}

func (c Config) withDefaults() Config {
	if c.Protocol == "" {
		c.Protocol = ProtocolWinRM
	}
	if c.OperationTimeout <= 0 {
		c.OperationTimeout = DefaultOperationTimeout
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.Backoff.Initial <= 0 {
		c.Backoff.Initial = DefaultBackoffInitial
	}
	if c.Backoff.Max <= 0 {
		c.Backoff.Max = DefaultBackoffMax
	}
	return c
}

func (c Config) port() int {
	switch {
	case c.Port != 0:
		return c.Port
	case c.Protocol == ProtocolSSH:
		return 22
	case c.HTTPS:
		return 5986
	}
	return 5985
}

func (c Config) validate() error {
	switch {
	case c.Protocol == ProtocolVMTools && (c.Guest == nil || c.Guest.Client == nil || c.Guest.VM.Value == ""):
		return errors.New("remote: vmtools needs Guest (the vCenter session and the VM)")
	case c.Protocol == ProtocolVMTools && c.Password == "":
		return errors.New("remote: vmtools needs a Password (the guest account's)")
	case c.Host == "" && c.Protocol != ProtocolVMTools:
		return errors.New("remote: Host is required")
	case c.User == "":
		return errors.New("remote: User is required")
	case c.Protocol != ProtocolWinRM && c.Protocol != ProtocolSSH && c.Protocol != ProtocolVMTools:
		return errors.New(`remote: Protocol must be "winrm", "ssh" or "vmtools"`)
	case c.Protocol == ProtocolWinRM && c.Password == "":
		return errors.New("remote: WinRM needs a Password")
	case c.Protocol == ProtocolWinRM && !c.HTTPS && !c.NTLM:
		return errors.New("remote: WinRM over HTTP needs NTLM: Basic authentication would send the password in clear text, " +
			"and Windows refuses it by default (winrm/config/service Basic=false, AllowUnencrypted=false)")
	case c.CertSHA256 != "" && (c.Protocol != ProtocolWinRM || !c.HTTPS):
		return errors.New("remote: CertSHA256 pins a WinRM HTTPS certificate: it needs Protocol winrm and HTTPS")
	case c.CertSHA256 != "" && (c.Insecure || len(c.CACertPEM) > 0 || c.TLSServerName != ""):
		return errors.New("remote: CertSHA256 replaces certificate verification: Insecure, CACertPEM and TLSServerName do not apply")
	case c.Protocol == ProtocolSSH && c.Password == "" && len(c.PrivateKeyPEM) == 0:
		return errors.New("remote: SSH needs a Password or a PrivateKeyPEM")
	case c.Protocol == ProtocolSSH && c.HostKey == "" && c.HostKeys == nil:
		return errors.New("remote: SSH needs HostKey (required) or HostKeys (trust on first use); host keys are never accepted unchecked")
	}
	return nil
}

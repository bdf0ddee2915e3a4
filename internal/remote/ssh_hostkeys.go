package remote

import (
	"bytes"
	"fmt"
	"net"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"
)

// HostKeys is trust on first use for one machine: the first key it presents
// is recorded, and every later connection must present that key, whatever
// address the machine answers on (a DHCP guest may come back at another
// one after a reboot). The caller keeps the recorded key (Key) and requires
// it on later runs through Config.HostKey.
type HostKeys struct {
	mu  sync.Mutex
	key ssh.PublicKey
	// required: key was given (Config.HostKey), not recorded here.
	required bool
}

// Key returns the recorded key in authorized_keys format
// ("ssh-ed25519 AAAA..."), or "" when none was seen yet.
func (h *HostKeys) Key() string {
	if h == nil {
		return ""
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.key == nil {
		return ""
	}
	return AuthorizedKey(h.key)
}

// check records key when none is, else compares.
func (h *HostKeys) check(hostname string, _ net.Addr, key ssh.PublicKey) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.key == nil {
		h.key = key
		return nil
	}
	if !keysEqual(h.key, key) {
		return &HostKeyError{Address: hostname, Want: ssh.FingerprintSHA256(h.key), Got: ssh.FingerprintSHA256(key),
			Presented: AuthorizedKey(key), Required: h.required}
	}
	return nil
}

// algorithms lists the host key algorithms the trusted key signs with
// (nil while none is recorded: any).
func (h *HostKeys) algorithms() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.key == nil {
		return nil
	}
	if h.key.Type() == ssh.KeyAlgoRSA {
		return []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}
	}
	return []string{h.key.Type()}
}

// AuthorizedKey formats a public key as an authorized_keys line without a
// comment ("ssh-ed25519 AAAA...").
func AuthorizedKey(key ssh.PublicKey) string {
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key)))
}

// ParseHostKey reads a host key in authorized_keys or known_hosts-value form
// ("ssh-ed25519 AAAA... [comment]").
func ParseHostKey(s string) (ssh.PublicKey, error) {
	key, _, _, _, err := ssh.ParseAuthorizedKey([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("not an SSH public key in authorized_keys format (\"ssh-ed25519 AAAA...\"): %w", err)
	}
	return key, nil
}

// TrustedHostKey is the host key a connection made with this configuration
// trusted: the required key, or the one recorded on first use ("" when no
// SSH connection was made).
func (c Config) TrustedHostKey() string {
	if c.Protocol != ProtocolSSH {
		return ""
	}
	if c.HostKey != "" {
		return c.HostKey
	}
	return c.HostKeys.Key()
}

// hostKeyCallback checks the required key, or records the first key seen.
// A different key is always an error. With a trusted key (required, or
// recorded at an earlier connection) the handshake asks for that key's
// algorithms only, so a host with several keys (Windows OpenSSH creates
// RSA, ECDSA and Ed25519 ones) presents that one.
func hostKeyCallback(cfg Config) (ssh.HostKeyCallback, []string, error) {
	keys := cfg.HostKeys
	if cfg.HostKey != "" {
		required, err := ParseHostKey(cfg.HostKey)
		if err != nil {
			return nil, nil, fmt.Errorf("remote: HostKey: %w", err)
		}
		keys = &HostKeys{key: required, required: true}
	}
	return keys.check, keys.algorithms(), nil
}

func keysEqual(a, b ssh.PublicKey) bool {
	return a.Type() == b.Type() && bytes.Equal(a.Marshal(), b.Marshal())
}

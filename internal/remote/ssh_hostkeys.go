package remote

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// HostKeyStore remembers SSH host keys for trust on first use.
type HostKeyStore interface {
	// Lookup returns the key recorded for address ("host:port"), or nil.
	Lookup(address string) (ssh.PublicKey, error)
	// Record saves the key first seen for address.
	Record(address string, key ssh.PublicKey) error
}

// MemoryHostKeys is a HostKeyStore in memory (one provider run).
type MemoryHostKeys struct {
	mu   sync.Mutex
	keys map[string]ssh.PublicKey
}

// Lookup implements HostKeyStore.
func (m *MemoryHostKeys) Lookup(address string) (ssh.PublicKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.keys[knownhosts.Normalize(address)], nil
}

// Record implements HostKeyStore.
func (m *MemoryHostKeys) Record(address string, key ssh.PublicKey) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.keys == nil {
		m.keys = map[string]ssh.PublicKey{}
	}
	m.keys[knownhosts.Normalize(address)] = key
	return nil
}

// KnownHostsFile is a HostKeyStore in an OpenSSH known_hosts file ("host key"
// or "[host]:port key" lines; hashed and wildcard entries are not matched).
type KnownHostsFile struct {
	Path string
	mu   sync.Mutex
}

// Lookup implements HostKeyStore.
func (f *KnownHostsFile) Lookup(address string) (ssh.PublicKey, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	data, err := os.ReadFile(f.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading known hosts %s: %w", f.Path, err)
	}
	want := knownhosts.Normalize(address)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '@' {
			continue
		}
		hosts, rest, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		for _, h := range strings.Split(hosts, ",") {
			if knownhosts.Normalize(h) == want || h == want {
				key, _, _, _, err := ssh.ParseAuthorizedKey([]byte(rest))
				if err != nil {
					return nil, fmt.Errorf("known hosts %s: bad key for %s: %w", f.Path, h, err)
				}
				return key, nil
			}
		}
	}
	return nil, sc.Err()
}

// Record implements HostKeyStore.
func (f *KnownHostsFile) Record(address string, key ssh.PublicKey) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o700); err != nil {
		return err
	}
	fh, err := os.OpenFile(f.Path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(fh, knownhosts.Line([]string{knownhosts.Normalize(address)}, key)); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

// hostKeyCallback checks the pinned key, or the store's recorded key,
// recording the first key seen. A different key is always an error.
func hostKeyCallback(cfg Config) (ssh.HostKeyCallback, error) {
	if cfg.HostKey != "" {
		pinned, _, _, _, err := ssh.ParseAuthorizedKey([]byte(cfg.HostKey))
		if err != nil {
			return nil, fmt.Errorf("remote: HostKey is not in authorized_keys format: %w", err)
		}
		return func(hostname string, remote net.Addr, key ssh.PublicKey) error {
			if !keysEqual(pinned, key) {
				return &HostKeyError{Address: hostname, Want: ssh.FingerprintSHA256(pinned), Got: ssh.FingerprintSHA256(key), Pinned: true}
			}
			return nil
		}, nil
	}
	store := cfg.KnownHosts
	return func(hostname string, remote net.Addr, key ssh.PublicKey) error {
		known, err := store.Lookup(hostname)
		if err != nil {
			return err
		}
		if known == nil {
			return store.Record(hostname, key)
		}
		if !keysEqual(known, key) {
			return &HostKeyError{Address: hostname, Want: ssh.FingerprintSHA256(known), Got: ssh.FingerprintSHA256(key)}
		}
		return nil
	}, nil
}

func keysEqual(a, b ssh.PublicKey) bool {
	return a.Type() == b.Type() && bytes.Equal(a.Marshal(), b.Marshal())
}

package winsim

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"encoding/pem"
	"fmt"

	"golang.org/x/crypto/ssh"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/pki"
)

// newTLSConfig loads the HTTPS listener's certificate: the store's one the
// disk's listener names by thumbprint, else the configured one, else a
// self-signed one for the computer name and IP (winsim's own tests). The
// handshake reads it anew each time (httpsCertificate).
func (h *Host) newTLSConfig() (*tls.Config, error) {
	cfg := &tls.Config{GetCertificate: h.httpsCertificate, MinVersion: tls.VersionTLS12}
	if in, ok, err := readInstallation(h.cfg.Dir); err != nil {
		return nil, err
	} else if ok && in.WinRMHTTPS != nil && in.WinRMHTTPS.CertificateThumbprint != "" {
		return cfg, h.bindStoreCert(in.WinRMHTTPS.CertificateThumbprint)
	}
	certPEM, keyPEM := h.cfg.TLSCertPEM, h.cfg.TLSKeyPEM
	if len(certPEM) == 0 {
		var err error
		if certPEM, keyPEM, err = pki.SelfSigned(h.cfg.ComputerName, h.cfg.IP); err != nil {
			return nil, err
		}
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("loading the HTTPS certificate: %w", err)
	}
	h.httpsCert = &cert
	return cfg, nil
}

// SSH host keys live where Win32-OpenSSH keeps them. sshd creates the
// missing ones when it starts as a service (ssh-keygen -A:
// PowerShell/openssh-portable contrib/win32/win32compat/wmain_sshd.c,
// generate_host_keys), so a machine keeps its keys across reboots, a clone
// keeps its source's (sysprep does not remove them), and deleting them and
// restarting sshd (or the machine) gives it new ones. Each connection reads
// the key from the disk (connSSHConfig). The simulated host serves the
// Ed25519 key.
const (
	SSHHostKeyFile    = `C:\ProgramData\ssh\ssh_host_ed25519_key`
	SSHHostKeyPubFile = SSHHostKeyFile + ".pub"
)

// loadSSHHostKey returns the host key on the disk, creating it when
// missing: from initial (HostConfig.SSHHostKeyPEM, the first boot of a new
// disk) or a new key, as sshd's ssh-keygen -A does.
func (h *Host) loadSSHHostKey(initial []byte) (ssh.Signer, error) {
	if b, err := h.fs.ReadFile(SSHHostKeyFile); err == nil {
		return ssh.ParsePrivateKey(b)
	}
	pemBytes := initial
	if len(pemBytes) == 0 {
		_, key, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, err
		}
		block, err := ssh.MarshalPrivateKey(key, "")
		if err != nil {
			return nil, err
		}
		pemBytes = pem.EncodeToMemory(block)
	}
	signer, err := ssh.ParsePrivateKey(pemBytes)
	if err != nil {
		return nil, err
	}
	pub := ssh.MarshalAuthorizedKey(signer.PublicKey())
	if err := h.fs.MkdirAll(`C:\ProgramData\ssh`); err != nil {
		return nil, err
	}
	if err := h.fs.WriteFile(SSHHostKeyFile, pemBytes, false); err != nil {
		return nil, err
	}
	return signer, h.fs.WriteFile(SSHHostKeyPubFile, pub, false)
}

// createSSHHostKey is sshd starting as a service: ssh-keygen -A creates
// the missing host key.
func (h *Host) createSSHHostKey() error {
	if _, err := h.loadSSHHostKey(nil); err != nil {
		return fmt.Errorf("SSH host key: %w", err)
	}
	return nil
}

// connSSHConfig is the configuration of one SSH connection, with the host
// key on the disk now. OpenSSH_for_Windows_9.5, the version the host
// announces, runs a re-executed sshd for each connection, and that process
// loads the host keys from their files (PowerShell/openssh-portable
// v9.5.0.0 sshd.c, main: "load host keys"): a key replaced on the disk is
// served at once, and with none the process exits ("sshd: no hostkeys
// available -- exiting.") and the connection closes before the key
// exchange. (From 9.8 the listener loads them once and hands them to
// sshd-session: not this version.)
func (h *Host) connSSHConfig() (*ssh.ServerConfig, error) {
	b, err := h.fs.ReadFile(SSHHostKeyFile)
	if err != nil {
		return nil, fmt.Errorf("SSH host key: %w", err)
	}
	signer, err := ssh.ParsePrivateKey(b)
	if err != nil {
		return nil, fmt.Errorf("SSH host key %s: %w", SSHHostKeyFile, err)
	}
	return h.newSSHConfig(signer)
}

// newSSHConfig builds the SSH server configuration: password and public-key
// authentication for the administrator, and the host key.
func (h *Host) newSSHConfig(signer ssh.Signer) (*ssh.ServerConfig, error) {
	var authorized []ssh.PublicKey
	rest := h.cfg.AuthorizedKeys
	for len(rest) > 0 {
		key, _, _, next, err := ssh.ParseAuthorizedKey(rest)
		if err != nil {
			break
		}
		authorized = append(authorized, key)
		rest = next
	}
	cfg := &ssh.ServerConfig{
		ServerVersion: "SSH-2.0-OpenSSH_for_Windows_9.5",
		PasswordCallback: func(c ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
			if h.sshPasswordOff.Load() {
				// PasswordAuthentication no: sshd offers no password method.
				return nil, fmt.Errorf("password authentication is off for %s", c.User())
			}
			if _, ok := h.checkPassword(c.User(), string(pw)); !ok {
				return nil, fmt.Errorf("password rejected for %s", c.User())
			}
			return nil, nil
		},
		PublicKeyCallback: func(c ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			if !h.authFails() && h.isAdmin(c.User()) {
				for _, k := range authorized {
					if k.Type() == key.Type() && string(k.Marshal()) == string(key.Marshal()) {
						return nil, nil
					}
				}
			}
			return nil, fmt.Errorf("unknown public key for %s", c.User())
		},
	}
	cfg.AddHostKey(signer)
	return cfg, nil
}

func (h *Host) isAdmin(user string) bool {
	return len(user) > 0 && equalFold(accountName(user), h.cfg.AdminUser)
}

package winsim_test

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/winsimtest"
)

// presentedKey is the host key a client sees in the SSH handshake.
func presentedKey(t *testing.T, f *winsimtest.Fixture) ssh.PublicKey {
	t.Helper()
	var got ssh.PublicKey
	cfg := &ssh.ClientConfig{User: "Administrator", Auth: []ssh.AuthMethod{ssh.Password(f.Password)}, Timeout: 5 * time.Second,
		HostKeyCallback: func(_ string, _ net.Addr, key ssh.PublicKey) error { got = key; return nil }}
	c, err := ssh.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", f.Host.Ports().SSH), cfg)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Close() // only the host key was wanted
	return got
}

// The host key lives on the disk where Win32-OpenSSH keeps it: kept across
// reboots, read by each connection (none while it is missing), and created
// anew when it went missing (sshd's ssh-keygen -A at start).
func TestSSHHostKeyOnDisk(t *testing.T) {
	f := winsimtest.StartHost(t, nil)
	first := presentedKey(t, f)
	if !bytes.Equal(first.Marshal(), f.HostKey.Marshal()) {
		t.Fatal("the host does not present the key its disk started with")
	}
	pub, err := f.Host.ReadFile(winsim.SSHHostKeyPubFile)
	if err != nil || !bytes.Equal(bytes.TrimSpace(pub), bytes.TrimSpace(ssh.MarshalAuthorizedKey(first))) {
		t.Fatalf("%s = %q (%v)", winsim.SSHHostKeyPubFile, pub, err)
	}
	f.Host.Reboot()
	if !bytes.Equal(presentedKey(t, f).Marshal(), first.Marshal()) {
		t.Fatal("the host key changed across a reboot")
	}
	for _, p := range []string{winsim.SSHHostKeyFile, winsim.SSHHostKeyPubFile} {
		if err := os.Remove(f.Host.DiskPath(p)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := &ssh.ClientConfig{User: "Administrator", Auth: []ssh.AuthMethod{ssh.Password(f.Password)}, Timeout: 5 * time.Second,
		HostKeyCallback: ssh.InsecureIgnoreHostKey()}
	if c, err := ssh.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", f.Host.Ports().SSH), cfg); err == nil {
		_ = c.Close()
		t.Fatal("a connection got through while the host key was missing")
	}
	f.Host.Reboot()
	second := presentedKey(t, f)
	if bytes.Equal(second.Marshal(), first.Marshal()) {
		t.Fatal("the deleted host key came back instead of a new one")
	}
	if !f.Host.FileExists(winsim.SSHHostKeyFile) {
		t.Fatal("the new host key was not written to the disk")
	}
}

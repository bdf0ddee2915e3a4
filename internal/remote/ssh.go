package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// sshTransport multiplexes sessions over one SSH connection, redialling once
// when the connection was lost (after a reboot, say).
type sshTransport struct {
	cfg    Config
	config *ssh.ClientConfig

	mu     sync.Mutex
	client *ssh.Client
	closed bool
}

func dialSSH(ctx context.Context, cfg Config) (*sshTransport, error) {
	cb, algorithms, err := hostKeyCallback(cfg)
	if err != nil {
		return nil, err
	}
	var auth []ssh.AuthMethod
	if len(cfg.PrivateKeyPEM) > 0 {
		signer, err := ssh.ParsePrivateKey(cfg.PrivateKeyPEM)
		if err != nil {
			return nil, fmt.Errorf("remote: PrivateKeyPEM: %w", err)
		}
		auth = append(auth, ssh.PublicKeys(signer))
	}
	if cfg.Password != "" {
		auth = append(auth, ssh.Password(cfg.Password))
	}
	t := &sshTransport{cfg: cfg, config: &ssh.ClientConfig{
		User: cfg.User, Auth: auth, HostKeyCallback: cb, HostKeyAlgorithms: algorithms, Timeout: cfg.DialTimeout,
	}}
	if _, err := t.connect(ctx); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *sshTransport) connectError(step Step, err error) *ConnectError {
	return &ConnectError{Protocol: "ssh", Host: t.cfg.Host, Port: t.cfg.port(), Step: step, Err: err, DialTimeout: t.cfg.DialTimeout}
}

// connect returns the live client, dialling when there is none.
func (t *sshTransport) connect(ctx context.Context) (*ssh.Client, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, fmt.Errorf("%s: transport closed", t.cfg)
	}
	if t.client != nil {
		return t.client, nil
	}
	addr := hostPort(t.cfg.Host, t.cfg.port())
	d := net.Dialer{Timeout: t.cfg.DialTimeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, t.connectError(StepDial, err)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() }) // unblocks the handshake; ctx.Err() is reported
	c, chans, reqs, err := ssh.NewClientConn(conn, addr, t.config)
	stop()
	if err != nil {
		_ = conn.Close() // the handshake's error is the one to report
		var hk *HostKeyError
		switch {
		case errors.As(err, &hk):
			return nil, t.connectError(StepHostKey, hk)
		case strings.Contains(err.Error(), "unable to authenticate"):
			return nil, t.connectError(StepAuth, err)
		}
		return nil, t.connectError(StepDial, err) // dropped mid-handshake: still booting
	}
	client := ssh.NewClient(c, chans, reqs)
	t.client = client
	go func() {
		_ = client.Wait()
		t.mu.Lock()
		if t.client == client {
			t.client = nil
		}
		t.mu.Unlock()
	}()
	return client, nil
}

// session opens a session, redialling once if the connection died.
func (t *sshTransport) session(ctx context.Context) (*ssh.Client, *ssh.Session, error) {
	for attempt := 0; ; attempt++ {
		c, err := t.connect(ctx)
		if err != nil {
			return nil, nil, err
		}
		s, err := c.NewSession()
		if err == nil {
			return c, s, nil
		}
		t.mu.Lock()
		if t.client == c {
			t.client = nil
		}
		t.mu.Unlock()
		_ = c.Close() // a broken client: the session error is the one to report
		if attempt == 1 {
			return nil, nil, t.connectError(StepDial, err)
		}
	}
}

// Run implements Transport.
func (t *sshTransport) Run(ctx context.Context, script string) (Result, error) {
	line := encodedCommand(script)
	if line == "" {
		path := tempScriptPath()
		body := []byte(utf8BOM + script)
		if err := t.put(ctx, bytes.NewReader(body), path); err != nil {
			return Result{}, fmt.Errorf("%s: uploading a %d-character script: %w", t.cfg, len(script), err)
		}
		defer t.removeNow(ctx, path)
		line = fileCommand(path)
	}
	res, err := t.exec(ctx, line)
	return finish(t.cfg, res, err)
}

// exec runs a command line; cancelling ctx kills it and returns at once.
func (t *sshTransport) exec(ctx context.Context, line string) (Result, error) {
	_, s, err := t.session(ctx)
	if err != nil {
		return Result{}, err
	}
	defer func() { _ = s.Close() }() // the command's result is read before; a close error changes nothing
	var stdout, stderr bytes.Buffer
	s.Stdout, s.Stderr = &stdout, &stderr
	if err := s.Start(line); err != nil {
		return Result{}, t.connectError(StepCommand, err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = s.Signal(ssh.SIGKILL)
		_ = s.Close()
		return Result{}, ctx.Err()
	}
	res := Result{Stdout: stdout.String(), Stderr: stderr.String()}
	var exit *ssh.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		res.ExitCode = exit.ExitStatus()
	default:
		// The session closed before the exit status came (x/crypto/ssh's
		// ExitMissingError, or the connection's own error): the host went
		// away under the command.
		return res, fmt.Errorf("%s: command ended without an exit status: %w: %w", t.cfg, ErrConnectionCut, err)
	}
	return res, nil
}

// removeCleanupTimeout bounds the background removal of a temporary file.
const removeCleanupTimeout = 30 * time.Second

// removeNow deletes a temporary script before Run returns, after a failure
// or a cancelled ctx too: a script may carry a secret that must not outlive
// its step (winrmTransport.removeNow).
func (t *sshTransport) removeNow(ctx context.Context, path string) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeCleanupTimeout)
	defer cancel()
	_, _ = t.exec(rctx, encodedCommand(removeScript(path)))
}

// removeLater deletes a temporary file in the background (a cancelled caller
// must not wait for it); its failure is harmless.
func (t *sshTransport) removeLater(path string) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), removeCleanupTimeout)
		defer cancel()
		_, _ = t.exec(ctx, encodedCommand(removeScript(path)))
	}()
}

// sftpPath turns C:\k\x into /C:/k/x, the form Windows OpenSSH's SFTP server takes.
func sftpPath(p string) string {
	return "/" + strings.ReplaceAll(p, `\`, "/")
}

// put writes r to path over SFTP (uploader).
func (t *sshTransport) put(ctx context.Context, r io.Reader, path string) error {
	c, err := t.connect(ctx)
	if err != nil {
		return err
	}
	sc, err := sftp.NewClient(c, sftp.UseConcurrentWrites(true), sftp.MaxConcurrentRequestsPerFile(64))
	if err != nil {
		return fmt.Errorf("starting SFTP: %w", err)
	}
	defer func() { _ = sc.Close() }() // the file's Close below reports whether the upload landed
	stop := context.AfterFunc(ctx, func() { _ = sc.Close() })
	defer stop()
	f, err := sc.Create(sftpPath(path))
	if err != nil {
		return fmt.Errorf("creating %s over SFTP: %w", path, err)
	}
	if _, err := f.ReadFrom(r); err != nil {
		_ = f.Close() // the write's error is the one to report
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("writing %s over SFTP: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("closing %s over SFTP: %w", path, err)
	}
	return nil
}

// Upload implements Transport.
func (t *sshTransport) Upload(ctx context.Context, r io.Reader, size int64, sha256hex, dest string) (bool, error) {
	return upload(ctx, t, r, size, sha256hex, dest, true)
}

// Close implements Transport.
func (t *sshTransport) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	if t.client != nil {
		err := t.client.Close()
		t.client = nil
		return err
	}
	return nil
}

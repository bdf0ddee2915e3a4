package winsim

import (
	"context"
	"encoding/binary"
	"net"
	"strings"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// sshUser is the account an SSH login name names.
func (h *Host) sshUser(login string) string {
	if a, ok := h.account(login); ok {
		return a.name
	}
	return login
}

func equalFold(a, b string) bool { return strings.EqualFold(a, b) }

// serveSSH accepts SSH connections until the listener closes.
func (h *Host) serveSSH(ln net.Listener) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		h.mu.Lock()
		if !h.up {
			h.mu.Unlock()
			_ = conn.Close() // refused: the host is down
			continue
		}
		h.sshConns[conn] = struct{}{}
		ctx := h.upCtx
		h.mu.Unlock()
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			defer func() {
				h.mu.Lock()
				delete(h.sshConns, conn)
				h.mu.Unlock()
				_ = conn.Close() // the connection is over either way
			}()
			h.serveSSHConn(ctx, conn)
		}()
	}
}

func (h *Host) serveSSHConn(ctx context.Context, conn net.Conn) {
	cfg, err := h.connSSHConfig()
	if err != nil {
		return // no host key: the connection's sshd exits
	}
	sc, chans, reqs, err := ssh.NewServerConn(conn, cfg)
	if err != nil {
		return
	}
	defer func() { _ = sc.Close() }()
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "only session channels")
			continue
		}
		ch, requests, err := nc.Accept()
		if err != nil {
			continue
		}
		// Counted like the connection (whose count holds this Add above
		// zero), so Stop waits for the commands of open sessions to end and
		// nothing touches the disk after it returns.
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			h.serveSSHSession(ctx, sc.User(), ch, requests)
		}()
	}
}

// serveSSHSession handles one session: exec runs a command line as Windows
// OpenSSH does (through cmd.exe), subsystem sftp serves the virtual disk.
func (h *Host) serveSSHSession(ctx context.Context, user string, ch ssh.Channel, requests <-chan *ssh.Request) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer func() { _ = ch.Close() }()
	for req := range requests {
		switch req.Type {
		case "exec":
			var payload struct{ Command string }
			if err := ssh.Unmarshal(req.Payload, &payload); err != nil {
				_ = req.Reply(false, nil)
				continue
			}
			_ = req.Reply(true, nil)
			go func() {
				// The client closing the channel (or sending a signal) cancels the command.
				for r := range requests {
					if r.Type == "signal" {
						cancel()
					}
					if r.WantReply {
						_ = r.Reply(false, nil)
					}
				}
				cancel()
			}()
			code := h.execute(ctx, execRequest{
				Transport: "ssh", User: h.sshUser(user), CommandLine: payload.Command,
				Stdin: ch, Stdout: ch, Stderr: ch.Stderr(),
			})
			status := make([]byte, 4)
			binary.BigEndian.PutUint32(status, uint32(code))
			_, _ = ch.SendRequest("exit-status", false, status)
			return
		case "subsystem":
			var payload struct{ Name string }
			if err := ssh.Unmarshal(req.Payload, &payload); err != nil || payload.Name != "sftp" {
				_ = req.Reply(false, nil)
				continue
			}
			_ = req.Reply(true, nil)
			go ssh.DiscardRequests(requests)
			srv := sftp.NewRequestServer(ch, h.sftpHandlers(h.logonContext(ctx, execRequest{Transport: "ssh", User: h.sshUser(user)})))
			_ = srv.Serve()
			_ = srv.Close()
			return
		case "env", "pty-req", "window-change":
			_ = req.Reply(true, nil)
		default:
			_ = req.Reply(false, nil)
		}
	}
}

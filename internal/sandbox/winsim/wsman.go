package winsim

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MaxEnvelopeSizeKB is the largest request the WinRM service accepts (the
// MaxEnvelopeSizekb setting: 500 on Windows Server 2012 and later).
const MaxEnvelopeSizeKB = 500

// maxReceiveChunk bounds the output returned by one Receive so the response
// stays under the client's MaxEnvelopeSize (153600 bytes for masterzen/winrm).
const maxReceiveChunk = 96 << 10

// maxOperationTimeout caps a Receive long poll whatever the client asks.
const maxOperationTimeout = 60 * time.Second

// encryptedOverhead bounds what an encrypted message's framing adds to the
// SOAP message it carries.
const encryptedOverhead = 1 << 10

// wsmanServer holds the WinRS shells of a host.
type wsmanServer struct {
	h      *Host
	mu     sync.Mutex
	shells map[string]*wsShell
}

type wsShell struct {
	id        string
	user      string
	transport string
	ctx       context.Context
	cancel    context.CancelFunc
	cmds      map[string]*wsCommand
}

// wsCommand is one running command line and its buffered output.
type wsCommand struct {
	id     string
	cancel context.CancelFunc
	stdin  *stdinBuffer

	mu      sync.Mutex
	stdout  []byte
	stderr  []byte
	done    bool
	exit    int
	changed chan struct{} // closed and replaced on every change
	// rebootMidReply: Faults.RebootMidReply chose this command; its
	// first reply is cut off by a reboot.
	rebootMidReply bool
}

func newWSManServer(h *Host) *wsmanServer {
	return &wsmanServer{h: h, shells: map[string]*wsShell{}}
}

// reset drops every shell (the host went down).
func (s *wsmanServer) reset() {
	s.mu.Lock()
	shells := s.shells
	s.shells = map[string]*wsShell{}
	s.mu.Unlock()
	for _, sh := range shells {
		sh.cancel()
	}
}

func (s *wsmanServer) shell(id string) (*wsShell, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sh, ok := s.shells[id]
	return sh, ok
}

func (c *wsCommand) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// streamWriter appends a command's output to its stdout or stderr buffer.
type streamWriter struct {
	c     *wsCommand
	isErr bool
}

func (w streamWriter) Write(p []byte) (int, error) {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	if w.isErr {
		w.c.stderr = append(w.c.stderr, p...)
	} else {
		w.c.stdout = append(w.c.stdout, p...)
	}
	w.c.notifyLocked()
	return len(p), nil
}

// wsmanHandler serves POST /wsman for one listener.
func (h *Host) wsmanHandler(transport string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.EqualFold(r.URL.Path, "/wsman") {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		user, scheme, ok := h.authenticate(w, r)
		if !ok {
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, MaxEnvelopeSizeKB<<10+encryptedOverhead+1))
		if err != nil {
			return
		}
		// Over HTTP a stock service takes only encrypted messages
		// (AllowUnencrypted false); an empty POST is one that is not.
		clearTextRefused := transport == "winrm-http" && !h.cfg.WinRM.AllowUnencrypted
		if len(body) == 0 && (r.Header.Get("Authorization") != "" || !clearTextRefused) {
			// An authentication-only request (the handshake's last leg), or
			// one the listener takes in clear text: nothing to run.
			w.WriteHeader(http.StatusOK)
			return
		}
		switch session := connStateOf(r).session; {
		case isEncrypted(r.Header.Get("Content-Type")):
			if session == nil {
				h.unauthorized(w, r, true) // no sealing context on this connection (Basic, or NTLM without SEAL)
				return
			}
			if body, err = unsealRequest(session, body); err != nil {
				w.Header().Set("Content-Length", "0")
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			sw := newSealedResponse(w, session)
			defer sw.finish()
			w = sw
		case clearTextRefused:
			// A clear-text SOAP message, or an empty POST relying on the
			// connection's authentication (httpauth.go).
			h.refuseUnencrypted(w, r, scheme)
			return
		}
		if len(body) > MaxEnvelopeSizeKB<<10 {
			_, _ = io.Copy(io.Discard, r.Body)
			h.writeFault(w, "", faultEncodingLimit)
			return
		}
		env, err := parseEnvelope(body)
		if err != nil {
			h.writeFault(w, "", faultBadRequest)
			return
		}
		h.wsman.serve(w, r, env, user, transport)
	})
}

func (s *wsmanServer) serve(w http.ResponseWriter, r *http.Request, env *envelope, user, transport string) {
	h := s.h
	rel := env.Header.MessageID
	switch strings.TrimSpace(env.Header.Action) {
	case actionCreate:
		s.create(w, r, env, user, transport)
		return
	case actionCommand, actionSend, actionReceive, actionSignal, actionDelete:
	default:
		h.writeFault(w, rel, faultAction)
		return
	}
	shellID := env.selector("ShellId")
	sh, ok := s.shell(shellID)
	if !ok {
		h.writeFault(w, rel, faultInvalidSelectors(shellID))
		return
	}
	switch strings.TrimSpace(env.Header.Action) {
	case actionDelete:
		s.mu.Lock()
		delete(s.shells, shellID)
		s.mu.Unlock()
		sh.cancel()
		writeSOAP(w, actionDelete+"Response", rel, "")
	case actionCommand:
		s.command(w, env, sh)
	case actionSend:
		s.send(w, r, env, sh)
	case actionReceive:
		s.receive(w, r, env, sh)
	case actionSignal:
		s.signal(w, env, sh)
	}
}

func (s *wsmanServer) create(w http.ResponseWriter, r *http.Request, env *envelope, user, transport string) {
	h := s.h
	h.mu.Lock()
	up := h.upCtx
	h.mu.Unlock()
	ctx, cancel := context.WithCancel(up)
	sh := &wsShell{id: newGUID(), user: user, transport: transport, ctx: ctx, cancel: cancel, cmds: map[string]*wsCommand{}}
	s.mu.Lock()
	s.shells[sh.id] = sh
	s.mu.Unlock()
	scheme := "http"
	if transport == "winrm-https" {
		scheme = "https"
	}
	addr := fmt.Sprintf("%s://%s/wsman", scheme, r.Host)
	body := fmt.Sprintf(`<x:ResourceCreated><a:Address>%s</a:Address><a:ReferenceParameters>`+
		`<w:ResourceURI>%s/cmd</w:ResourceURI><w:SelectorSet><w:Selector Name="ShellId">%s</w:Selector></w:SelectorSet>`+
		`</a:ReferenceParameters></x:ResourceCreated><rsp:Shell><rsp:ShellId>%s</rsp:ShellId><rsp:ResourceUri>%s/cmd</rsp:ResourceUri>`+
		`<rsp:Owner>%s\%s</rsp:Owner><rsp:ClientIP>%s</rsp:ClientIP><rsp:IdleTimeOut>PT7200.000S</rsp:IdleTimeOut>`+
		`<rsp:InputStreams>stdin</rsp:InputStreams><rsp:OutputStreams>stdout stderr</rsp:OutputStreams>`+
		`<rsp:ShellRunTime>P0DT0H0M0S</rsp:ShellRunTime><rsp:ShellInactivity>P0DT0H0M0S</rsp:ShellInactivity></rsp:Shell>`,
		addr, nsShell, sh.id, sh.id, nsShell, h.cfg.ComputerName, user, remoteIP(r))
	writeSOAP(w, actionCreate+"Response", env.Header.MessageID, body)
}

func remoteIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func (s *wsmanServer) command(w http.ResponseWriter, env *envelope, sh *wsShell) {
	cl := env.Body.CommandLine
	if cl == nil {
		s.h.writeFault(w, env.Header.MessageID, faultBadRequest)
		return
	}
	line := strings.TrimSpace(cl.Command)
	for _, a := range cl.Arguments {
		line += " " + a
	}
	ctx, cancel := context.WithCancel(sh.ctx)
	c := &wsCommand{id: newGUID(), cancel: cancel, stdin: newStdinBuffer(), changed: make(chan struct{}),
		rebootMidReply: s.h.takeRebootMidReply(line)}
	s.mu.Lock()
	sh.cmds[c.id] = c
	s.mu.Unlock()
	context.AfterFunc(ctx, c.stdin.closeRead)
	started := s.h.spawn(func() {
		code := s.h.execute(ctx, execRequest{
			Transport: sh.transport, User: sh.user, CommandLine: line,
			Stdin: c.stdin, Stdout: streamWriter{c: c}, Stderr: streamWriter{c: c, isErr: true},
		})
		c.stdin.closeRead()
		c.mu.Lock()
		c.done, c.exit = true, code
		c.notifyLocked()
		c.mu.Unlock()
	})
	if !started { // the host is stopping: as a host going down, no answer
		cancel()
		s.h.writeFault(w, env.Header.MessageID, faultInvalidCommand(c.id))
		return
	}
	writeSOAP(w, actionCommand+"Response", env.Header.MessageID,
		fmt.Sprintf(`<rsp:CommandResponse><rsp:CommandId>%s</rsp:CommandId></rsp:CommandResponse>`, c.id))
}

func (s *wsmanServer) lookup(sh *wsShell, id string) (*wsCommand, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := sh.cmds[id]
	return c, ok
}

func (s *wsmanServer) send(w http.ResponseWriter, r *http.Request, env *envelope, sh *wsShell) {
	if env.Body.Send == nil {
		s.h.writeFault(w, env.Header.MessageID, faultBadRequest)
		return
	}
	for _, st := range env.Body.Send.Streams {
		c, ok := s.lookup(sh, st.CommandID)
		if !ok {
			s.h.writeFault(w, env.Header.MessageID, faultInvalidCommand(st.CommandID))
			return
		}
		data, err := base64.StdEncoding.DecodeString(strings.TrimSpace(st.Data))
		if err != nil {
			s.h.writeFault(w, env.Header.MessageID, faultBadRequest)
			return
		}
		if err := c.stdin.write(r.Context(), data); err != nil {
			s.h.writeFault(w, env.Header.MessageID, faultInvalidCommand(st.CommandID))
			return
		}
		if strings.EqualFold(st.End, "true") {
			c.stdin.closeWrite()
		}
	}
	writeSOAP(w, actionSend+"Response", env.Header.MessageID, `<rsp:SendResponse/>`)
}

var durationRE = regexp.MustCompile(`^PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?$`)

// parseDuration reads an xs:duration such as PT60S or PT5.000S.
func parseDuration(s string) time.Duration {
	m := durationRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return maxOperationTimeout
	}
	h, _ := strconv.Atoi(m[1])
	mi, _ := strconv.Atoi(m[2])
	sec, _ := strconv.ParseFloat(m[3], 64)
	d := time.Duration(h)*time.Hour + time.Duration(mi)*time.Minute + time.Duration(sec*float64(time.Second))
	if d <= 0 || d > maxOperationTimeout {
		return maxOperationTimeout
	}
	return d
}

// receive is the long poll: it answers as soon as there is output or the
// command ends, else after OperationTimeout with the w:TimedOut fault the
// client treats as "poll again".
func (s *wsmanServer) receive(w http.ResponseWriter, r *http.Request, env *envelope, sh *wsShell) {
	if env.Body.Receive == nil {
		s.h.writeFault(w, env.Header.MessageID, faultBadRequest)
		return
	}
	id := env.Body.Receive.DesiredStream.CommandID
	c, ok := s.lookup(sh, id)
	if !ok {
		s.h.writeFault(w, env.Header.MessageID, faultInvalidCommand(id))
		return
	}
	timer := time.NewTimer(parseDuration(env.Header.OperationTimeout))
	defer timer.Stop()
	for {
		c.mu.Lock()
		if len(c.stdout) > 0 || len(c.stderr) > 0 || c.done {
			body := c.takeOutputLocked()
			cut := c.rebootMidReply
			c.rebootMidReply = false
			c.mu.Unlock()
			if cut {
				s.h.cutReplyAndReboot(w, actionReceive+"Response", env.Header.MessageID, body)
			}
			writeSOAP(w, actionReceive+"Response", env.Header.MessageID, body)
			return
		}
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-changed:
		case <-timer.C:
			s.h.writeFault(w, env.Header.MessageID, faultTimedOut)
			return
		case <-r.Context().Done():
			return
		case <-sh.ctx.Done():
			s.h.writeFault(w, env.Header.MessageID, faultInvalidSelectors(sh.id))
			return
		}
	}
}

// takeOutputLocked drains up to maxReceiveChunk of output into a ReceiveResponse.
func (c *wsCommand) takeOutputLocked() string {
	var b strings.Builder
	b.WriteString(`<rsp:ReceiveResponse>`)
	budget := maxReceiveChunk
	take := func(buf *[]byte, name string) {
		n := min(len(*buf), budget)
		budget -= n
		if n > 0 {
			fmt.Fprintf(&b, `<rsp:Stream Name="%s" CommandId="%s">%s</rsp:Stream>`, name, c.id, base64.StdEncoding.EncodeToString((*buf)[:n]))
			*buf = (*buf)[n:]
		}
	}
	take(&c.stdout, "stdout")
	take(&c.stderr, "stderr")
	if c.done && len(c.stdout) == 0 && len(c.stderr) == 0 {
		fmt.Fprintf(&b, `<rsp:Stream Name="stdout" CommandId="%s" End="true"></rsp:Stream><rsp:Stream Name="stderr" CommandId="%s" End="true"></rsp:Stream>`, c.id, c.id)
		fmt.Fprintf(&b, `<rsp:CommandState CommandId="%s" State="%s"><rsp:ExitCode>%d</rsp:ExitCode></rsp:CommandState>`, c.id, stateDone, c.exit)
	} else {
		fmt.Fprintf(&b, `<rsp:CommandState CommandId="%s" State="%s"></rsp:CommandState>`, c.id, stateRunning)
	}
	b.WriteString(`</rsp:ReceiveResponse>`)
	return b.String()
}

func (s *wsmanServer) signal(w http.ResponseWriter, env *envelope, sh *wsShell) {
	sig := env.Body.Signal
	if sig == nil {
		s.h.writeFault(w, env.Header.MessageID, faultBadRequest)
		return
	}
	c, ok := s.lookup(sh, sig.CommandID)
	if !ok {
		s.h.writeFault(w, env.Header.MessageID, faultInvalidCommand(sig.CommandID))
		return
	}
	switch strings.TrimSpace(sig.Code) {
	case signalTerm, signalCtrlC:
		c.cancel()
		c.stdin.closeRead()
		c.mu.Lock()
		done := c.done
		c.mu.Unlock()
		if done {
			s.mu.Lock()
			delete(sh.cmds, c.id)
			s.mu.Unlock()
		}
	}
	writeSOAP(w, actionSignal+"Response", env.Header.MessageID, `<rsp:SignalResponse/>`)
}

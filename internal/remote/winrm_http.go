package remote

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	azntlm "github.com/Azure/go-ntlmssp"
	"github.com/bodgit/ntlmssp"
	"github.com/masterzen/winrm"
	"github.com/masterzen/winrm/soap"
)

// stepError tags a low-level failure with the connection step it happened in.
type stepError struct {
	step Step
	err  error
}

func (e *stepError) Error() string { return e.err.Error() }
func (e *stepError) Unwrap() error { return e.err }

// soapContentType is what WinRM expects and answers.
const soapContentType = "application/soap+xml;charset=UTF-8"

// newHTTPClient builds the connection pool of one WinRM transport. With NTLM,
// each connection is authenticated right after it is dialed: NTLM
// authenticates the TCP connection, and negotiating per request (as
// go-ntlmssp's Negotiator does) breaks when the handshake's legs land on
// different pooled connections, which concurrent Send and Receive provoke.
// Authenticated at dial time, every pooled connection is usable by anyone.
func newHTTPClient(cfg Config, url string) (*http.Client, error) {
	tlsCfg := &tls.Config{
		ServerName:         cfg.TLSServerName,
		InsecureSkipVerify: cfg.Insecure, //nolint:gosec // explicit opt-in, documented
		MinVersion:         tls.VersionTLS12,
	}
	if tlsCfg.ServerName == "" {
		tlsCfg.ServerName = cfg.Host
	}
	if cfg.CertSHA256 != "" {
		if err := pinTLS(tlsCfg, hostPort(cfg.Host, cfg.port()), cfg.CertSHA256); err != nil {
			return nil, err
		}
	} else if len(cfg.CACertPEM) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(cfg.CACertPEM) {
			return nil, errors.New("remote: CACertPEM holds no PEM certificate")
		}
		tlsCfg.RootCAs = pool
	}
	dialer := &net.Dialer{Timeout: cfg.DialTimeout, KeepAlive: 30 * time.Second}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, &stepError{StepDial, err}
		}
		if cfg.HTTPS {
			tc := tls.Client(conn, tlsCfg)
			hctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
			err := tc.HandshakeContext(hctx)
			cancel()
			if err != nil {
				_ = conn.Close() // the handshake's error is the one to report
				return nil, &stepError{tlsStep(err), err}
			}
			conn = tc
		}
		if cfg.NTLM {
			session, err := ntlmHandshake(conn, cfg, url)
			if err != nil {
				_ = conn.Close() // the authentication's error is the one to report
				return nil, err
			}
			if session != nil {
				return &sealedConn{Conn: conn, session: session}, nil
			}
		}
		return conn, nil
	}
	tr := &http.Transport{
		// No proxy, whatever HTTPS_PROXY or HTTP_PROXY say: net/http tunnels
		// a request through a proxy over a connection it dials itself and
		// secures with its own TLS configuration, so neither dial above
		// would run: the configured CA and server name would not be checked
		// (the system roots instead), and no NTLM handshake (nor the sealing
		// of HTTP messages) would happen on the connection. A guest is
		// reached directly, as Terraform's own WinRM communicator does.
		Proxy:               nil,
		MaxIdleConnsPerHost: 8,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   false,
	}
	if cfg.HTTPS {
		tr.DialTLSContext = dial
	} else {
		tr.DialContext = dial
	}
	return &http.Client{Transport: tr}, nil
}

// tlsStep separates certificate problems (not retried) from connections
// dropped during the handshake (the host is still coming up).
func tlsStep(err error) Step {
	var (
		verr *tls.CertificateVerificationError
		uerr x509.UnknownAuthorityError
		herr x509.HostnameError
		cerr x509.CertificateInvalidError
		rerr tls.RecordHeaderError
		aerr tls.AlertError
		perr *CertificatePinError
	)
	if errors.As(err, &perr) || errors.As(err, &verr) || errors.As(err, &uerr) || errors.As(err, &herr) || errors.As(err, &cerr) || errors.As(err, &rerr) || errors.As(err, &aerr) {
		return StepTLS
	}
	return StepDial
}

// splitDomainUser splits DOMAIN\user into the user and the domain ("" for
// a local account), as NTLM's AUTHENTICATE message carries them.
func splitDomainUser(u string) (user, domain string) {
	if d, name, ok := strings.Cut(u, `\`); ok {
		return name, d
	}
	return u, ""
}

// sealed reports whether a configuration encrypts its messages: NTLM over
// HTTP, as a stock Windows listener requires ([MS-WSMV] 2.2.9.1.1). Over
// HTTPS, TLS protects them and the listener takes them as they are.
func (c Config) sealed() bool { return c.NTLM && !c.HTTPS }

// ntlmHandshake authenticates a fresh connection: NEGOTIATE, CHALLENGE,
// AUTHENTICATE on empty POSTs, which WinRM answers without running anything.
// Over HTTP it returns the NTLM session that seals the connection's messages
// (bodgit/ntlmssp asks for signing, sealing and key exchange); over HTTPS
// no session (Azure/go-ntlmssp, no message security).
func ntlmHandshake(conn net.Conn, cfg Config, url string) (*ntlmssp.SecuritySession, error) {
	_ = conn.SetDeadline(time.Now().Add(cfg.DialTimeout))
	defer func() { _ = conn.SetDeadline(time.Time{}) }() // a failed reset surfaces on the next read
	user, domain := splitDomainUser(cfg.User)
	var negotiate []byte
	var processChallenge func([]byte) ([]byte, error)
	var client *ntlmssp.Client
	if cfg.sealed() {
		var err error
		if client, err = ntlmssp.NewClient(ntlmssp.SetUserInfo(user, cfg.Password), ntlmssp.SetDomain(domain),
			ntlmssp.SetVersion(ntlmssp.DefaultVersion())); err != nil {
			return nil, &stepError{StepAuth, err}
		}
		if negotiate, err = client.Authenticate(nil, nil); err != nil {
			return nil, &stepError{StepAuth, err}
		}
		processChallenge = func(challenge []byte) ([]byte, error) { return client.Authenticate(challenge, nil) }
	} else {
		var err error
		// The negotiate message's domain and workstation are the client
		// machine's (none here); the user's domain goes with the
		// authenticate message, which splits it from the name itself.
		if negotiate, err = azntlm.NewNegotiateMessage("", ""); err != nil {
			return nil, &stepError{StepAuth, err}
		}
		processChallenge = func(challenge []byte) ([]byte, error) {
			return azntlm.NewAuthenticateMessage(challenge, cfg.User, cfg.Password, nil)
		}
	}
	br := bufio.NewReader(conn)
	leg := func(token []byte) (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPost, url, http.NoBody)
		req.Header.Set("Content-Type", soapContentType)
		req.Header.Set("Authorization", "Negotiate "+base64.StdEncoding.EncodeToString(token))
		if err := req.Write(conn); err != nil {
			return nil, &stepError{StepDial, err}
		}
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			return nil, &stepError{StepDial, err}
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close() // drained; nothing was to be read from it
		return resp, nil
	}
	resp, err := leg(negotiate) //nolint:bodyclose // leg drains and closes the body
	if err != nil {
		return nil, err
	}
	challenge, err := negotiateToken(resp)
	if resp.StatusCode != http.StatusUnauthorized || err != nil || len(challenge) == 0 {
		return nil, &stepError{StepAuth, fmt.Errorf("the listener did not answer the NTLM NEGOTIATE with a challenge (HTTP %d); is Negotiate authentication enabled?", resp.StatusCode)}
	}
	authenticate, err := processChallenge(challenge)
	if err != nil {
		return nil, &stepError{StepAuth, err}
	}
	if resp, err = leg(authenticate); err != nil { //nolint:bodyclose // leg drains and closes the body
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &stepError{StepAuth, fmt.Errorf("NTLM authentication rejected (HTTP %d)", resp.StatusCode)}
	}
	if client == nil {
		return nil, nil
	}
	if client.SecuritySession() == nil {
		return nil, &stepError{StepAuth, errors.New("the listener did not grant NTLM sealing, which message encryption over HTTP needs")}
	}
	return client.SecuritySession(), nil
}

func negotiateToken(resp *http.Response) ([]byte, error) {
	for _, v := range resp.Header.Values("WWW-Authenticate") {
		scheme, data, ok := strings.Cut(v, " ")
		if ok && (strings.EqualFold(scheme, "Negotiate") || strings.EqualFold(scheme, "NTLM")) {
			return base64.StdEncoding.DecodeString(strings.TrimSpace(data))
		}
	}
	return nil, errors.New("no Negotiate token")
}

// opTransporter is the winrm.Transporter of one operation: the shared pool,
// the operation's context (so Close and hard cancellation abort requests),
// and our own error types instead of the library's strings.
type opTransporter struct {
	t   *winrmTransport
	ctx context.Context
}

func (o *opTransporter) Transport(*winrm.Endpoint) error { return nil }

// httpStatusError is a non-200 answer. Its text keeps the SOAP fault, which
// the library matches for "OperationTimeout" to keep polling.
type httpStatusError struct {
	status int
	body   string
}

func (e *httpStatusError) Error() string {
	return fmt.Sprintf("http error %d: %s", e.status, faultText(e.body))
}

// faultText extracts the readable message of a SOAP fault. The library polls
// again when the text contains "OperationTimeout", so that word is kept.
func faultText(body string) string {
	msg := body
	if i := strings.Index(body, "<f:Message>"); i >= 0 {
		if j := strings.Index(body[i:], "</f:Message>"); j > 0 {
			msg = strings.TrimSpace(body[i+len("<f:Message>") : i+j])
		}
	}
	if len(msg) > 2000 {
		msg = msg[:2000] + "..."
	}
	if strings.Contains(body, "OperationTimeout") && !strings.Contains(msg, "OperationTimeout") {
		msg += " (OperationTimeout)"
	}
	return msg
}

func (o *opTransporter) Post(_ *winrm.Client, msg *soap.SoapMessage) (string, error) {
	t := o.t
	var (
		req    *http.Request
		sealed *sealedRequest
		err    error
	)
	if t.cfg.sealed() {
		req, sealed, err = newSealedRequest(o.ctx, t.url, []byte(msg.String()))
	} else {
		req, err = http.NewRequestWithContext(o.ctx, http.MethodPost, t.url, strings.NewReader(msg.String()))
		if err == nil {
			req.Header.Set("Content-Type", soapContentType)
		}
	}
	if err != nil {
		return "", err
	}
	if !t.cfg.NTLM {
		req.SetBasicAuth(t.cfg.User, t.cfg.Password)
	}
	resp, err := t.http.Do(req)
	if err != nil {
		var se *stepError
		if errors.As(err, &se) {
			return "", &ConnectError{Protocol: t.cfg.label(), Host: t.cfg.Host, Port: t.cfg.port(), Step: se.step, Err: se.err, DialTimeout: t.cfg.DialTimeout}
		}
		return "", &ConnectError{Protocol: t.cfg.label(), Host: t.cfg.Host, Port: t.cfg.port(), Step: StepDial, Err: err, DialTimeout: t.cfg.DialTimeout}
	}
	defer func() { _ = resp.Body.Close() }() // read to the end below; ReadAll reports a failure
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", &ConnectError{Protocol: t.cfg.label(), Host: t.cfg.Host, Port: t.cfg.port(), Step: StepDial, Err: err}
	}
	contentType := resp.Header.Get("Content-Type")
	if sealed != nil && isSealed(contentType) {
		if body, err = sealed.unsealReply(body); err != nil {
			return "", fmt.Errorf("%s: decrypting the reply: %w", t.cfg, err)
		}
		contentType = soapContentType
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return "", &ConnectError{Protocol: t.cfg.label(), Host: t.cfg.Host, Port: t.cfg.port(), Step: StepAuth,
			Err: fmt.Errorf("HTTP 401: credentials rejected for user %q", t.cfg.User)}
	case !strings.Contains(contentType, "application/soap+xml"):
		return "", fmt.Errorf("unexpected answer from %s: HTTP %d with content type %q", t.url, resp.StatusCode, contentType)
	case resp.StatusCode != http.StatusOK:
		return "", &httpStatusError{status: resp.StatusCode, body: string(body)}
	}
	return string(body), nil
}

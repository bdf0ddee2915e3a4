package winsim_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bodgit/ntlmssp"
	"github.com/masterzen/winrm"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/winsimtest"
)

// TestMasterzenEncryption: masterzen/winrm's own message encryption
// (NewEncryption("ntlm")) against a stock host's HTTP listener. It starts
// a new NTLM client for every message and authenticates with an empty POST
// that carries no Authorization header, on the connection the previous
// message authenticated.
func TestMasterzenEncryption(t *testing.T) {
	f := winsimtest.StartHost(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := newClientWith(t, f, false, winsimtest.Password, func() winrm.Transporter {
		enc, err := winrm.NewEncryption("ntlm")
		if err != nil {
			t.Fatal(err)
		}
		return enc
	})
	for i := range 3 {
		out, _, code, err := c.RunPSWithContext(ctx, "Write-Output $env:COMPUTERNAME")
		if err != nil || code != 0 || strings.TrimSpace(out) != "WIN-TEST" {
			t.Fatalf("run %d: stdout %q code %d err %v", i, out, code, err)
		}
	}
}

// TestAuthenticatedConnectionWithoutAuthorization pins what the listeners
// answer a request without an Authorization header on a connection NTLM
// has authenticated: HTTP.sys authenticates it as the connection's user
// (NTLM credential caching on keep-alive connections), and over HTTP the
// WinRM service then serves it only if its message is encrypted.
func TestAuthenticatedConnectionWithoutAuthorization(t *testing.T) {
	f := winsimtest.StartHost(t, nil)
	create := winrm.NewOpenShellRequest("http://127.0.0.1/wsman", winrm.DefaultParameters).String()

	t.Run("http", func(t *testing.T) {
		c := dialRaw(t, f, false)
		c.handshake()
		// An empty POST relying on the connection: not encrypted, refused
		// as a clear-text message is, offering Negotiate again.
		resp := c.do("", "application/soap+xml;charset=UTF-8", nil)
		if resp.StatusCode != http.StatusUnauthorized || !slices.Contains(resp.Header.Values("WWW-Authenticate"), "Negotiate") {
			t.Fatalf("empty POST without Authorization: HTTP %d %q, want 401 offering Negotiate", resp.StatusCode, resp.Header.Values("WWW-Authenticate"))
		}
		// A new handshake on the same connection (a type 1 on it), then an
		// encrypted message without Authorization: served, sealed.
		nc := c.handshake()
		sealed, sig, err := nc.SecuritySession().Wrap([]byte(create))
		if err != nil {
			t.Fatal(err)
		}
		resp = c.do("", `multipart/encrypted;protocol="application/HTTP-SPNEGO-session-encrypted";boundary="Encrypted Boundary"`, frame(sig, sealed))
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "multipart/encrypted") {
			t.Fatalf("encrypted Create without Authorization: HTTP %d, %q", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		// A clear-text message without Authorization: 401.
		if resp := c.do("", "application/soap+xml;charset=UTF-8", []byte(create)); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("clear-text Create without Authorization: HTTP %d, want 401", resp.StatusCode)
		}
	})
	t.Run("https", func(t *testing.T) {
		c := dialRaw(t, f, true)
		c.handshake()
		// TLS protects the messages: the connection's user is served.
		if resp := c.do("", "application/soap+xml;charset=UTF-8", nil); resp.StatusCode != http.StatusOK {
			t.Fatalf("empty POST without Authorization: HTTP %d, want 200", resp.StatusCode)
		}
		if resp := c.do("", "application/soap+xml;charset=UTF-8", []byte(create)); resp.StatusCode != http.StatusOK {
			t.Fatalf("Create without Authorization: HTTP %d, want 200", resp.StatusCode)
		}
	})
	t.Run("unauthenticated", func(t *testing.T) {
		c := dialRaw(t, f, false)
		resp := c.do("", "application/soap+xml;charset=UTF-8", nil)
		if resp.StatusCode != http.StatusUnauthorized || !slices.Contains(resp.Header.Values("WWW-Authenticate"), "Negotiate") {
			t.Fatalf("empty POST on a new connection: HTTP %d %q, want 401 offering Negotiate", resp.StatusCode, resp.Header.Values("WWW-Authenticate"))
		}
	})
}

// rawConn is one TCP (or TLS) connection to a listener, written to request
// by request, as an NTLM client keeps its authenticated connection.
type rawConn struct {
	t   *testing.T
	c   net.Conn
	br  *bufio.Reader
	url string
}

func dialRaw(t *testing.T, f *winsimtest.Fixture, https bool) *rawConn {
	t.Helper()
	port, scheme := f.Host.Ports().WinRM, "http"
	var c net.Conn
	var err error
	if https {
		port, scheme = f.Host.Ports().WinRMHTTPS, "https"
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(f.CA.CertPEM)
		c, err = tls.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12})
	} else {
		c, err = net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &rawConn{t: t, c: c, br: bufio.NewReader(c), url: fmt.Sprintf("%s://127.0.0.1:%d/wsman", scheme, port)}
}

// answer is what a listener answered one request: its status and headers
// (the body is read and dropped).
type answer struct {
	StatusCode int
	Header     http.Header
}

// do sends one request and reads its whole answer.
func (c *rawConn) do(authorization, contentType string, body []byte) answer {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	if err := req.Write(c.c); err != nil {
		c.t.Fatal(err)
	}
	resp, err := http.ReadResponse(c.br, req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		c.t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header}
}

// handshake authenticates the connection with NTLM (NEGOTIATE, CHALLENGE,
// AUTHENTICATE on empty POSTs, as pywinrm's first request does) and
// returns the client holding the session.
func (c *rawConn) handshake() *ntlmssp.Client {
	c.t.Helper()
	nc, err := ntlmssp.NewClient(ntlmssp.SetUserInfo("Administrator", winsimtest.Password), ntlmssp.SetVersion(ntlmssp.DefaultVersion()))
	if err != nil {
		c.t.Fatal(err)
	}
	negotiate, err := nc.Authenticate(nil, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	resp := c.do("Negotiate "+base64.StdEncoding.EncodeToString(negotiate), "application/soap+xml;charset=UTF-8", nil)
	scheme, token, _ := strings.Cut(resp.Header.Get("WWW-Authenticate"), " ")
	challenge, err := base64.StdEncoding.DecodeString(token)
	if resp.StatusCode != http.StatusUnauthorized || scheme != "Negotiate" || err != nil {
		c.t.Fatalf("NEGOTIATE: HTTP %d %q, want 401 with a challenge", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	authenticate, err := nc.Authenticate(challenge, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	if resp := c.do("Negotiate "+base64.StdEncoding.EncodeToString(authenticate), "application/soap+xml;charset=UTF-8", nil); resp.StatusCode != http.StatusOK {
		c.t.Fatalf("AUTHENTICATE: HTTP %d, want 200", resp.StatusCode)
	}
	return nc
}

package remote

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"

	"github.com/bodgit/ntlmssp"
)

// WinRM message encryption over HTTP ([MS-WSMV] 2.2.9.1.1): a stock Windows
// listener (AllowUnencrypted=false) refuses SOAP messages in clear text on
// HTTP, so with NTLM every message is sealed with the NTLM session of the
// connection it travels on ([MS-NLMP] 3.4: RC4 sealing and an HMAC-MD5
// signature, bodgit/ntlmssp's SecuritySession) and framed as a two-part MIME
// body. Each pooled connection is authenticated when it is dialed
// (ntlmHandshake), so it carries its own session; a request learns its
// connection from httptrace's GotConn, which the transport calls before it
// writes the body.

const (
	sealedProtocol    = "application/HTTP-SPNEGO-session-encrypted"
	sealedBoundary    = "--Encrypted Boundary"
	sealedContentType = `multipart/encrypted;protocol="` + sealedProtocol + `";boundary="Encrypted Boundary"`
	sealedDataHeader  = "\tContent-Type: application/octet-stream\r\n"
	ntlmSignatureLen  = 16 // NTLMSSP_MESSAGE_SIGNATURE with extended session security ([MS-NLMP] 2.2.2.9.2)
)

// sealedConn is a connection authenticated with NTLM and its session.
// Sealing and unsealing take turns (the sequence numbers count messages in
// order), which HTTP/1.1's one request at a time per connection gives; the
// lock keeps the reply's unsealing apart from the next request's sealing
// once the transport has taken the connection back.
type sealedConn struct {
	net.Conn
	mu      sync.Mutex
	session *ntlmssp.SecuritySession
}

func (c *sealedConn) seal(msg []byte) (sig, sealed []byte, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	sealed, sig, err = c.session.Wrap(msg)
	return sig, sealed, err
}

func (c *sealedConn) unseal(sig, sealed []byte) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session.Unwrap(sealed, sig)
}

// sealedRequest is one encrypted request: its body is sealed when the
// transport reads it, with the session of the connection GotConn named.
type sealedRequest struct {
	plain []byte
	conn  *sealedConn
	body  *bytes.Reader
	err   error
}

// newSealedRequest builds a POST whose body is msg, sealed.
func newSealedRequest(ctx context.Context, url string, msg []byte) (*http.Request, *sealedRequest, error) {
	s := &sealedRequest{plain: msg}
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		s.conn, _ = info.Conn.(*sealedConn)
	}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, s)
	if err != nil {
		return nil, nil, err
	}
	req.ContentLength = int64(sealedLen(len(msg)))
	req.Header.Set("Content-Type", sealedContentType)
	return req, s, nil
}

func (s *sealedRequest) Read(p []byte) (int, error) {
	if s.body == nil && s.err == nil {
		if s.conn == nil {
			s.err = errors.New("remote: no NTLM session for an encrypted message")
		} else {
			sig, sealed, err := s.conn.seal(s.plain)
			s.err = err
			s.body = bytes.NewReader(sealedFrame(len(s.plain), sig, sealed))
		}
	}
	if s.err != nil {
		return 0, s.err
	}
	return s.body.Read(p)
}

// sealedFrame is the body of [MS-WSMV] 2.2.9.1.1.2: the metadata part
// (OriginalContent's Length is the SOAP message's), then the signature's
// length, the signature and the sealed message.
func sealedFrame(n int, sig, sealed []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\r\n\tContent-Type: %s\r\n\tOriginalContent: type=%s;Length=%d\r\n%s\r\n%s",
		sealedBoundary, sealedProtocol, soapContentType, n, sealedBoundary, sealedDataHeader)
	_ = binary.Write(&b, binary.LittleEndian, uint32(len(sig)))
	b.Write(sig)
	b.Write(sealed)
	b.WriteString(sealedBoundary + "--\r\n")
	return b.Bytes()
}

// sealedLen is the length of the frame of an n-byte message: RC4 keeps the
// length, the signature has a fixed one.
func sealedLen(n int) int {
	return len(sealedFrame(n, make([]byte, ntlmSignatureLen), make([]byte, n)))
}

// isSealed reports whether a reply's Content-Type is an encrypted message.
func isSealed(contentType string) bool {
	return strings.HasPrefix(strings.ToLower(contentType), "multipart/encrypted") && strings.Contains(contentType, sealedProtocol)
}

// unsealReply returns the SOAP message of an encrypted reply body.
func (s *sealedRequest) unsealReply(body []byte) ([]byte, error) {
	if s.conn == nil {
		return nil, errors.New("remote: an encrypted reply on a connection without an NTLM session")
	}
	_, data, ok := bytes.Cut(body, []byte(sealedDataHeader))
	if !ok {
		return nil, errors.New("remote: malformed encrypted reply")
	}
	data, _ = bytes.CutSuffix(data, []byte(sealedBoundary+"--\r\n"))
	if len(data) < 4 {
		return nil, errors.New("remote: malformed encrypted reply")
	}
	n := int(binary.LittleEndian.Uint32(data))
	if n != ntlmSignatureLen || len(data) < 4+n {
		return nil, errors.New("remote: malformed encrypted reply")
	}
	return s.conn.unseal(data[4:4+n], data[4+n:])
}

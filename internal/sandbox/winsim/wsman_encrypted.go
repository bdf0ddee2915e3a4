package winsim

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Encrypted messages of [MS-WSMV] 2.2.9.1.1 (SPNEGO over HTTP): with a
// Negotiate (NTLM) security context, the SOAP message travels sealed in a
// two-part MIME body:
//
//	Content-Type: multipart/encrypted;protocol="application/HTTP-SPNEGO-session-encrypted";boundary="Encrypted Boundary"
//
//	--Encrypted Boundary\r\n
//	\tContent-Type: application/HTTP-SPNEGO-session-encrypted\r\n
//	\tOriginalContent: type=application/soap+xml;charset=UTF-8;Length=<n>\r\n
//	--Encrypted Boundary\r\n
//	\tContent-Type: application/octet-stream\r\n
//	<signature length, uint32 LE><NTLM message signature><n sealed bytes>--Encrypted Boundary--\r\n
//
// (2.2.9.1.1.1 the HTTP headers, 2.2.9.1.1.2.1 the metadata part,
// 2.2.9.1.1.2.2 the encrypted data: "For NTLM, it MUST be its Message
// Signature", and the sealed data's length MUST equal Length). The service
// answers in the same form.

const (
	encryptedProtocol    = "application/HTTP-SPNEGO-session-encrypted"
	encryptedBoundary    = "--Encrypted Boundary"
	encryptedContentType = `multipart/encrypted;protocol="` + encryptedProtocol + `";boundary="Encrypted Boundary"`
	encryptedDataHeader  = "\tContent-Type: application/octet-stream\r\n"
)

var errEncryptedBody = errors.New("wsman: malformed encrypted message")

// isEncrypted reports whether a request's Content-Type is an encrypted message.
func isEncrypted(contentType string) bool {
	ct := strings.ToLower(contentType)
	return strings.HasPrefix(ct, "multipart/encrypted") && strings.Contains(ct, strings.ToLower(encryptedProtocol))
}

// unsealRequest returns the SOAP message of an encrypted request body.
func unsealRequest(s *ntlmSession, body []byte) ([]byte, error) {
	meta := encryptedBoundary + "\r\n\tContent-Type: " + encryptedProtocol + "\r\n\tOriginalContent: "
	if !bytes.HasPrefix(body, []byte(meta)) {
		return nil, errEncryptedBody
	}
	rest := body[len(meta):]
	line, rest, ok := bytes.Cut(rest, []byte("\r\n"))
	if !ok {
		return nil, errEncryptedBody
	}
	_, length, ok := strings.Cut(string(line), "Length=")
	n, err := strconv.Atoi(strings.TrimSpace(length))
	if !ok || err != nil || n < 0 {
		return nil, errEncryptedBody
	}
	part := encryptedBoundary + "\r\n" + encryptedDataHeader
	if !bytes.HasPrefix(rest, []byte(part)) {
		return nil, errEncryptedBody
	}
	rest = rest[len(part):]
	if len(rest) < 4 {
		return nil, errEncryptedBody
	}
	sigLen := int(binary.LittleEndian.Uint32(rest))
	rest = rest[4:]
	if sigLen != ntlmSignatureLen || len(rest) < sigLen+n {
		return nil, errEncryptedBody
	}
	sig, sealed, trailer := rest[:sigLen], rest[sigLen:sigLen+n], rest[sigLen+n:]
	if !bytes.Equal(trailer, []byte(encryptedBoundary+"--\r\n")) {
		return nil, errEncryptedBody
	}
	return s.unseal(sig, sealed)
}

// sealedBody frames a reply as an encrypted message.
func sealedBody(s *ntlmSession, msg []byte) []byte {
	sig, sealed := s.seal(msg)
	return encryptedFrame(len(msg), sig, sealed)
}

func encryptedFrame(n int, sig, sealed []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\r\n\tContent-Type: %s\r\n\tOriginalContent: type=%s;Length=%d\r\n%s\r\n%s",
		encryptedBoundary, encryptedProtocol, soapContent, n, encryptedBoundary, encryptedDataHeader)
	_ = binary.Write(&b, binary.LittleEndian, uint32(len(sig)))
	b.Write(sig)
	b.Write(sealed)
	b.WriteString(encryptedBoundary + "--\r\n")
	return b.Bytes()
}

// sealedResponse buffers a handler's reply and sends it sealed when the
// handler is done (finish), with the handler's status.
type sealedResponse struct {
	w       http.ResponseWriter
	s       *ntlmSession
	header  http.Header
	status  int
	buf     bytes.Buffer
	flushed bool
}

func newSealedResponse(w http.ResponseWriter, s *ntlmSession) *sealedResponse {
	return &sealedResponse{w: w, s: s, header: http.Header{}}
}

func (r *sealedResponse) Header() http.Header { return r.header }

func (r *sealedResponse) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *sealedResponse) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.buf.Write(p)
}

// Flush sends what is buffered as the start of a reply that promised the
// whole of its Content-Length: a reply cut off midway (Faults.RebootMidReply),
// whose encrypted body ends early as the plain one would.
func (r *sealedResponse) Flush() {
	if r.flushed {
		return
	}
	r.flushed = true
	promised, err := strconv.Atoi(r.header.Get("Content-Length"))
	if err != nil || promised < r.buf.Len() {
		promised = r.buf.Len()
	}
	sig, sealed := r.s.seal(r.buf.Bytes())
	frame := encryptedFrame(promised, sig, sealed)
	full := len(frame) + promised - r.buf.Len()
	r.writeHeader(full)
	_, _ = r.w.Write(frame[:len(frame)-len(encryptedBoundary+"--\r\n")])
	if fl, ok := r.w.(http.Flusher); ok {
		fl.Flush()
	}
}

// finish seals and sends the reply.
func (r *sealedResponse) finish() {
	if r.flushed {
		return
	}
	r.flushed = true
	if r.status == 0 && r.buf.Len() == 0 {
		r.status = http.StatusOK
	}
	body := sealedBody(r.s, r.buf.Bytes())
	r.writeHeader(len(body))
	_, _ = r.w.Write(body)
}

func (r *sealedResponse) writeHeader(length int) {
	h := r.w.Header()
	for k, v := range r.header {
		h[k] = v
	}
	h.Set("Content-Type", encryptedContentType)
	h.Set("Content-Length", strconv.Itoa(length))
	if r.status == 0 {
		r.status = http.StatusOK
	}
	r.w.WriteHeader(r.status)
}

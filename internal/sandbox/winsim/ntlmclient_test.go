package winsim_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/bodgit/ntlmssp"
	ntlmhttp "github.com/bodgit/ntlmssp/http"
	"github.com/masterzen/winrm"
	"github.com/masterzen/winrm/soap"
)

// sealingNTLM is an outside WinRM client transport that encrypts its
// messages ([MS-WSMV] 2.2.9.1.1) with bodgit/ntlmssp, the library
// masterzen/winrm's NewEncryption is built on: its HTTP client authenticates
// one connection with an empty POST (the SOAP message never travels in clear
// text) and its SecuritySession seals and unseals every message. The MIME
// framing is pywinrm's (winrm/encryption.py), which masterzen/winrm's
// encryption.go copies: bodgit's own Wrap counts the signature in
// OriginalContent's Length, which [MS-WSMV] 2.2.9.1.1.2.2 says is the
// sealed data's alone. (masterzen/winrm's NewEncryption itself starts a new
// NTLM client for every message but authenticates only when answered 401,
// so on an already authenticated connection its second message goes out
// empty.)
type sealingNTLM struct {
	user, password string

	mu   sync.Mutex // one connection, one message at a time: the sequence numbers count them
	url  string
	http *http.Client
	ntlm *ntlmssp.Client
}

func (s *sealingNTLM) Transport(ep *winrm.Endpoint) error {
	s.url = fmt.Sprintf("http://%s:%d/wsman", ep.Host, ep.Port)
	return nil
}

func (s *sealingNTLM) authenticate() error {
	nc, err := ntlmssp.NewClient(ntlmssp.SetUserInfo(s.user, s.password), ntlmssp.SetVersion(ntlmssp.DefaultVersion()))
	if err != nil {
		return err
	}
	hc := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	auth, err := ntlmhttp.NewClient(hc, nc)
	if err != nil {
		return err
	}
	req, _ := http.NewRequest(http.MethodPost, s.url, http.NoBody)
	req.Header.Set("Content-Type", "application/soap+xml;charset=UTF-8")
	resp, err := auth.Do(req)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || nc.SecuritySession() == nil {
		return fmt.Errorf("http error %d: authentication", resp.StatusCode)
	}
	s.http, s.ntlm = hc, nc
	return nil
}

func (s *sealingNTLM) Post(_ *winrm.Client, msg *soap.SoapMessage) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ntlm == nil {
		if err := s.authenticate(); err != nil {
			return "", err
		}
	}
	sealed, sig, err := s.ntlm.SecuritySession().Wrap([]byte(msg.String()))
	if err != nil {
		return "", err
	}
	req, _ := http.NewRequest(http.MethodPost, s.url, bytes.NewReader(frame(sig, sealed)))
	req.Header.Set("Content-Type", `multipart/encrypted;protocol="application/HTTP-SPNEGO-session-encrypted";boundary="Encrypted Boundary"`)
	resp, err := s.http.Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode == http.StatusUnauthorized {
		return "", errors.New("http error 401")
	}
	_, data, ok := bytes.Cut(raw, []byte("\tContent-Type: application/octet-stream\r\n"))
	data, ok2 := bytes.CutSuffix(data, []byte("--Encrypted Boundary--\r\n"))
	if !ok || !ok2 || len(data) < 20 {
		return "", fmt.Errorf("http error %d: not an encrypted reply: %q", resp.StatusCode, raw)
	}
	n := binary.LittleEndian.Uint32(data)
	plain, err := s.ntlm.SecuritySession().Unwrap(data[4+n:], data[4:4+n])
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("http error %d: %s", resp.StatusCode, plain)
	}
	return string(plain), nil
}

// frame is pywinrm's _build_message: the metadata part, then the signature's
// length, the signature and the sealed message.
func frame(sig, sealed []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "--Encrypted Boundary\r\n\tContent-Type: application/HTTP-SPNEGO-session-encrypted\r\n"+
		"\tOriginalContent: type=application/soap+xml;charset=UTF-8;Length=%d\r\n"+
		"--Encrypted Boundary\r\n\tContent-Type: application/octet-stream\r\n", len(sealed))
	_ = binary.Write(&b, binary.LittleEndian, uint32(len(sig)))
	b.Write(sig)
	b.Write(sealed)
	b.WriteString("--Encrypted Boundary--\r\n")
	return b.Bytes()
}

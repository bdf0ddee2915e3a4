package winsim

import (
	"bytes"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"strings"
	"time"
	"unicode/utf16"

	"golang.org/x/crypto/md4" //nolint:staticcheck // SA1019: NTLM's NT hash is MD4 by definition (MS-NLMP 3.3.1); not used for security here
)

// The server side of NTLMv2 ([MS-NLMP]) as WinRM's HTTP listener runs it:
// NEGOTIATE in, CHALLENGE out, AUTHENTICATE in, and the password really checked
// by recomputing the client's NTProofStr from the NT hash.

var ntlmSignature = []byte("NTLMSSP\x00")

const (
	ntlmNegotiateUnicode      = 1 << 0
	ntlmRequestTarget         = 1 << 2
	ntlmNegotiateNTLM         = 1 << 9
	ntlmNegotiateAlwaysSign   = 1 << 15
	ntlmTargetTypeServer      = 1 << 17
	ntlmNegotiateExtendedSec  = 1 << 19
	ntlmNegotiateTargetInfo   = 1 << 23
	ntlmNegotiate128          = 1 << 29
	ntlmNegotiate56           = 1 << 31
	ntlmChallengeFlags        = ntlmNegotiateUnicode | ntlmRequestTarget | ntlmNegotiateNTLM | ntlmNegotiateAlwaysSign | ntlmTargetTypeServer | ntlmNegotiateExtendedSec | ntlmNegotiateTargetInfo | ntlmNegotiate128 | ntlmNegotiate56
	ntlmChallengeHeaderLen    = 48
	ntlmAuthenticateHeaderLen = 64
	ntlmV2ResponseMinLen      = 16 + 28
	avEOL, avNbComputer       = 0, 1
	avNbDomain, avDNSComputer = 2, 3
	avDNSDomain, avTimestamp  = 4, 7
)

var errNTLM = errors.New("ntlm: authentication failed")

func utf16le(s string) []byte {
	u := utf16.Encode([]rune(s))
	b := make([]byte, 2*len(u))
	for i, c := range u {
		binary.LittleEndian.PutUint16(b[2*i:], c)
	}
	return b
}

func fromUTF16le(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return string(utf16.Decode(u))
}

// ntlmMessageType returns 1, 2 or 3 for a well-formed message, else 0.
func ntlmMessageType(msg []byte) int {
	if len(msg) < 12 || !bytes.Equal(msg[:8], ntlmSignature) {
		return 0
	}
	return int(binary.LittleEndian.Uint32(msg[8:12]))
}

// ntlmChallenge builds a CHALLENGE message for the computer name. Of the
// NEGOTIATE message's flags it grants signing, sealing and key exchange when
// asked ([MS-NLMP] 3.2.5.1.1: the server sets them in the CHALLENGE if the
// client requested them), which message encryption over HTTP needs.
func ntlmChallenge(target string, negotiateFlags uint32) (msg []byte, challenge [8]byte) {
	_, _ = rand.Read(challenge[:])
	name := utf16le(strings.ToUpper(target))
	var info bytes.Buffer
	av := func(id uint16, v []byte) {
		_ = binary.Write(&info, binary.LittleEndian, id)
		_ = binary.Write(&info, binary.LittleEndian, uint16(len(v)))
		info.Write(v)
	}
	av(avNbDomain, name)
	av(avNbComputer, name)
	av(avDNSDomain, utf16le(strings.ToLower(target)))
	av(avDNSComputer, utf16le(strings.ToLower(target)))
	ts := make([]byte, 8)
	binary.LittleEndian.PutUint64(ts, uint64(time.Now().UnixNano()/100)+116444736000000000)
	av(avTimestamp, ts)
	av(avEOL, nil)

	msg = make([]byte, ntlmChallengeHeaderLen, ntlmChallengeHeaderLen+len(name)+info.Len())
	copy(msg, ntlmSignature)
	binary.LittleEndian.PutUint32(msg[8:], 2)
	binary.LittleEndian.PutUint16(msg[12:], uint16(len(name)))
	binary.LittleEndian.PutUint16(msg[14:], uint16(len(name)))
	binary.LittleEndian.PutUint32(msg[16:], ntlmChallengeHeaderLen)
	binary.LittleEndian.PutUint32(msg[20:], ntlmChallengeFlags|negotiateFlags&(ntlmNegotiateSign|ntlmNegotiateSeal|ntlmNegotiateKeyExch))
	copy(msg[24:32], challenge[:])
	binary.LittleEndian.PutUint16(msg[40:], uint16(info.Len()))
	binary.LittleEndian.PutUint16(msg[42:], uint16(info.Len()))
	binary.LittleEndian.PutUint32(msg[44:], uint32(ntlmChallengeHeaderLen+len(name)))
	msg = append(msg, name...)
	msg = append(msg, info.Bytes()...)
	return msg, challenge
}

// ntlmField reads a (len, maxlen, offset) payload field of a message.
func ntlmField(msg []byte, at int) ([]byte, error) {
	if len(msg) < at+8 {
		return nil, errNTLM
	}
	n := int(binary.LittleEndian.Uint16(msg[at:]))
	off := int(binary.LittleEndian.Uint32(msg[at+4:]))
	if off < 0 || n < 0 || off+n > len(msg) {
		return nil, errNTLM
	}
	return msg[off : off+n], nil
}

// ntlmNegotiateFlags returns a NEGOTIATE message's flags.
func ntlmNegotiateFlags(msg []byte) uint32 {
	if len(msg) < 16 {
		return 0
	}
	return binary.LittleEndian.Uint32(msg[12:])
}

// ntlmVerify checks an AUTHENTICATE message against the challenge and the
// account's password and returns the user and domain it names, and the
// connection's session security when signing or sealing was negotiated.
func ntlmVerify(msg []byte, challenge [8]byte, password string) (user, domain string, session *ntlmSession, err error) {
	user, domain, baseKey, err := ntlmVerifyResponse(msg, challenge, password)
	if err != nil {
		return user, domain, nil, err
	}
	flags := binary.LittleEndian.Uint32(msg[60:])
	if flags&(ntlmNegotiateSign|ntlmNegotiateSeal) == 0 {
		return user, domain, nil, nil
	}
	encryptedKey, err := ntlmField(msg, 52)
	if err != nil {
		return user, domain, nil, err
	}
	exported, err := ntlmExportedKey(flags, baseKey, encryptedKey)
	if err != nil {
		return user, domain, nil, err
	}
	session, err = newNTLMServerSession(flags, exported)
	return user, domain, session, err
}

// ntlmVerifyResponse checks the NTLMv2 response and returns the session base
// key ([MS-NLMP] 3.3.2: HMAC_MD5(ResponseKeyNT, NTProofStr)).
func ntlmVerifyResponse(msg []byte, challenge [8]byte, password string) (user, domain string, baseKey []byte, err error) {
	if ntlmMessageType(msg) != 3 || len(msg) < ntlmAuthenticateHeaderLen {
		return "", "", nil, errNTLM
	}
	nt, err := ntlmField(msg, 20)
	if err != nil {
		return "", "", nil, err
	}
	dom, err := ntlmField(msg, 28)
	if err != nil {
		return "", "", nil, err
	}
	usr, err := ntlmField(msg, 36)
	if err != nil {
		return "", "", nil, err
	}
	if binary.LittleEndian.Uint32(msg[60:])&ntlmNegotiateUnicode == 0 {
		return "", "", nil, errors.New("ntlm: only Unicode is supported")
	}
	user, domain = fromUTF16le(usr), fromUTF16le(dom)
	if len(nt) < ntlmV2ResponseMinLen {
		return user, domain, nil, errors.New("ntlm: NTLMv1 responses are refused (LmCompatibilityLevel 5)")
	}
	h := md4.New()
	h.Write(utf16le(password))
	ntHash := h.Sum(nil)
	ntowfv2 := hmacMD5(ntHash, utf16le(strings.ToUpper(user)+domain))
	proof := hmacMD5(ntowfv2, challenge[:], nt[16:])
	if !hmac.Equal(proof, nt[:16]) {
		return user, domain, nil, errNTLM
	}
	return user, domain, hmacMD5(ntowfv2, proof), nil
}

// ntlmUserName is the UserName of an AUTHENTICATE message ([MS-NLMP]
// 2.2.1.3), "" when it has none: whose password the response is checked
// against.
func ntlmUserName(msg []byte) string {
	if ntlmMessageType(msg) != 3 || len(msg) < ntlmAuthenticateHeaderLen {
		return ""
	}
	usr, err := ntlmField(msg, 36)
	if err != nil {
		return ""
	}
	return fromUTF16le(usr)
}

func hmacMD5(key []byte, data ...[]byte) []byte {
	m := hmac.New(md5.New, key)
	for _, d := range data {
		m.Write(d)
	}
	return m.Sum(nil)
}

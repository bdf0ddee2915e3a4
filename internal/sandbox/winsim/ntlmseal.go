package winsim

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/rc4"
	"encoding/binary"
	"errors"
)

// The server side of NTLM session security ([MS-NLMP] 3.4): what the WinRM
// service seals its replies with and unseals requests with once a connection
// authenticated with NTLMv2 negotiated NTLMSSP_NEGOTIATE_SEAL. Keys are
// derived as in 3.4.5.2 (SIGNKEY) and 3.4.5.3 (SEALKEY) from the exported
// session key of 3.3.2 (NTLMv2: KeyExchangeKey = SessionBaseKey, unwrapped
// from EncryptedRandomSessionKey with RC4K when NTLMSSP_NEGOTIATE_KEY_EXCH is
// set); messages are sealed with RC4 and signed with HMAC_MD5 over the
// sequence number and the message (3.4.4.2, extended session security),
// the checksum RC4-encrypted with the same handle when KEY_EXCH is set.

const (
	ntlmNegotiateSign    = 1 << 4
	ntlmNegotiateSeal    = 1 << 5
	ntlmNegotiateKeyExch = 1 << 30
	ntlmSignatureLen     = 16
)

var (
	ntlmClientSignMagic = []byte("session key to client-to-server signing key magic constant\x00")
	ntlmServerSignMagic = []byte("session key to server-to-client signing key magic constant\x00")
	ntlmClientSealMagic = []byte("session key to client-to-server sealing key magic constant\x00")
	ntlmServerSealMagic = []byte("session key to server-to-client sealing key magic constant\x00")
	errNTLMSignature    = errors.New("ntlm: the message signature does not verify")
)

// ntlmSession is one connection's sealing state: the server's outgoing
// direction is server-to-client, its incoming one client-to-server. Messages
// are sealed and unsealed in order (the sequence numbers count them), which
// HTTP/1.1's one request at a time per connection guarantees.
type ntlmSession struct {
	flags              uint32
	sendSign, recvSign []byte
	send, recv         *rc4.Cipher
	sendSeq, recvSeq   uint32
}

// newNTLMServerSession derives the session of an AUTHENTICATE message's
// negotiated flags and exported session key.
func newNTLMServerSession(flags uint32, exportedKey []byte) (*ntlmSession, error) {
	sealKey := func(magic []byte) []byte {
		key := exportedKey
		switch {
		case flags&ntlmNegotiate128 != 0:
		case flags&ntlmNegotiate56 != 0:
			key = key[:7]
		default:
			key = key[:5]
		}
		return md5Sum(key, magic)
	}
	send, err := rc4.NewCipher(sealKey(ntlmServerSealMagic))
	if err != nil {
		return nil, err
	}
	recv, err := rc4.NewCipher(sealKey(ntlmClientSealMagic))
	if err != nil {
		return nil, err
	}
	return &ntlmSession{
		flags:    flags,
		sendSign: md5Sum(exportedKey, ntlmServerSignMagic),
		recvSign: md5Sum(exportedKey, ntlmClientSignMagic),
		send:     send, recv: recv,
	}, nil
}

// ntlmExportedKey is the exported session key of an NTLMv2 AUTHENTICATE
// message ([MS-NLMP] 3.3.2 and 3.2.5.1.2): the session base key, or the
// random key the client sent encrypted with it.
func ntlmExportedKey(flags uint32, sessionBaseKey, encryptedRandomKey []byte) ([]byte, error) {
	if flags&ntlmNegotiateKeyExch == 0 {
		return sessionBaseKey, nil
	}
	if len(encryptedRandomKey) != 16 {
		return nil, errNTLM
	}
	c, err := rc4.NewCipher(sessionBaseKey)
	if err != nil {
		return nil, err
	}
	key := make([]byte, 16)
	c.XORKeyStream(key, encryptedRandomKey)
	return key, nil
}

// seal encrypts a reply and returns its signature and sealed bytes.
func (s *ntlmSession) seal(msg []byte) (signature, sealed []byte) {
	sealed = make([]byte, len(msg))
	s.send.XORKeyStream(sealed, msg)
	signature = s.signature(msg, s.sendSign, s.sendSeq, s.send)
	s.sendSeq++
	return signature, sealed
}

// unseal decrypts a request and checks its signature.
func (s *ntlmSession) unseal(signature, sealed []byte) ([]byte, error) {
	if len(signature) != ntlmSignatureLen {
		return nil, errNTLMSignature
	}
	msg := make([]byte, len(sealed))
	s.recv.XORKeyStream(msg, sealed)
	want := s.signature(msg, s.recvSign, s.recvSeq, s.recv)
	if !hmac.Equal(want, signature) {
		return nil, errNTLMSignature
	}
	s.recvSeq++
	return msg, nil
}

// signature is the NTLMSSP_MESSAGE_SIGNATURE of extended session security
// ([MS-NLMP] 2.2.2.9.2, 3.4.4.2): version 1, the first 8 bytes of
// HMAC_MD5(SigningKey, SeqNum || Message) (RC4-encrypted when KEY_EXCH), SeqNum.
func (s *ntlmSession) signature(msg, signKey []byte, seq uint32, handle *rc4.Cipher) []byte {
	sig := make([]byte, ntlmSignatureLen)
	binary.LittleEndian.PutUint32(sig, 1)
	binary.LittleEndian.PutUint32(sig[12:], seq)
	mac := hmac.New(md5.New, signKey)
	mac.Write(sig[12:16])
	mac.Write(msg)
	checksum := mac.Sum(nil)[:8]
	if s.flags&ntlmNegotiateKeyExch != 0 {
		handle.XORKeyStream(checksum, checksum)
	}
	copy(sig[4:12], checksum)
	return sig
}

func md5Sum(parts ...[]byte) []byte {
	h := md5.New()
	for _, p := range parts {
		h.Write(p)
	}
	return h.Sum(nil)
}

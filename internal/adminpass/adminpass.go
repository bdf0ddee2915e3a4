// Package adminpass derives each node's own Administrator password from the
// user's admin_password_wo, so no two nodes share one (the same local
// Administrator password on every member of a pool lets whoever takes one
// node's NT hash log on to all of them: pass-the-hash), while nothing is
// stored: the provider derives the same password again whenever it
// connects to the node later (a repair, a rejoin).
//
// The derivation is fixed and documented so that an operator who holds
// admin_password_wo can compute a node's password (docs/guides): Argon2id
// (RFC 9106; golang.org/x/crypto/argon2) over the user's password, salted
// with a fixed label and the node's lower-case name, with OWASP's minimum
// parameters for Argon2id (Password Storage Cheat Sheet: 19 MiB, two
// passes, one lane), so a node's password or NT hash taken from one node
// does not make guessing admin_password_wo offline cheap. Windows LAPS
// (learn.microsoft.com/windows-server/identity/laps/laps-overview) is the
// alternative where the site has it: it needs Active Directory or Microsoft
// Entra ID to store the passwords it rotates, which a node joined only to
// Kubernetes does not have, so the provider does not configure it.
package adminpass

import (
	"encoding/base64"
	"strconv"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Label names this derivation and its version in the salt.
const Label = "terraform-provider-windows/admin-password/v1"

// Argon2id parameters (OWASP Password Storage Cheat Sheet's minimum).
const (
	argonTime    = 2
	argonMemory  = 19 * 1024 // KiB
	argonThreads = 1
	argonKeyLen  = 32
)

// prefix gives every password the four character categories Windows'
// complexity rule counts (it asks for three: "Password must meet
// complexity requirements", learn.microsoft.com/previous-versions/windows/
// it-pro/windows-10/security/threat-protection/security-policy-settings/
// password-must-meet-complexity-requirements); the 43 characters after it
// carry the 256 derived bits.
const prefix = "Wn1-"

// ForNode is node's Administrator password, derived from secret (the
// user's admin_password_wo). account is the Administrator account's name:
// Windows refuses a password that contains it, so a derivation that happens
// to is done again with a counter.
func ForNode(secret, node, account string) string {
	for i := 0; ; i++ {
		salt := Label + "\x00" + strings.ToLower(node)
		if i > 0 {
			salt += "\x00" + strconv.Itoa(i)
		}
		key := argon2.IDKey([]byte(secret), []byte(salt), argonTime, argonMemory, argonThreads, argonKeyLen)
		p := prefix + base64.RawURLEncoding.EncodeToString(key)
		if len(account) < 3 || !strings.Contains(strings.ToLower(p), strings.ToLower(account)) {
			return p
		}
	}
}

package adminpass

import (
	"strings"
	"testing"
	"unicode"
)

func TestForNode(t *testing.T) {
	a := ForNode("S3cret-Passw0rd!", "win-1", "Administrator")
	if a != ForNode("S3cret-Passw0rd!", "WIN-1", "Administrator") {
		t.Fatal("the derivation depends on the name's case")
	}
	for name, other := range map[string]string{
		"another node":     ForNode("S3cret-Passw0rd!", "win-2", "Administrator"),
		"another password": ForNode("S3cret-Passw0rd?", "win-1", "Administrator"),
	} {
		if other == a {
			t.Errorf("%s gives the same password", name)
		}
	}
	if a == "S3cret-Passw0rd!" || strings.Contains(a, "S3cret") {
		t.Errorf("the password shows the secret: %q", a)
	}
	var upper, lower, digit, other bool
	for _, r := range a {
		switch {
		case unicode.IsUpper(r):
			upper = true
		case unicode.IsLower(r):
			lower = true
		case unicode.IsDigit(r):
			digit = true
		default:
			other = true
		}
	}
	if !upper || !lower || !digit || !other || len(a) != 47 {
		t.Errorf("%q (%d characters) misses a character category", a, len(a))
	}
}

// A derivation that contains the account's name is done again: Windows
// refuses such a password.
func TestForNodeAvoidsTheAccountName(t *testing.T) {
	first := ForNode("S3cret-Passw0rd!", "win-1", "")
	account := first[10:14] // four characters the first derivation holds
	p := ForNode("S3cret-Passw0rd!", "win-1", account)
	if p == first || strings.Contains(strings.ToLower(p), strings.ToLower(account)) {
		t.Fatalf("account %q: got %q (first %q)", account, p, first)
	}
}

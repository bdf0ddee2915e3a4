package redact_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/wincluster/terraform-provider-windows/internal/redact"
)

const (
	token  = "abcdef.0123456789abcdef"
	secret = "0123456789abcdef"
)

var kubeconfig = "apiVersion: v1\nclusters:\n- cluster:\n    server: https://10.0.0.1:6443\n  name: kubernetes\nkind: Config\nusers:\n- name: tls-bootstrap-token-user\n  user:\n    token: " + token + "\n"

func utf16le(s string) []byte {
	u := utf16.Encode([]rune(s))
	b := make([]byte, 2*len(u))
	for i, c := range u {
		b[2*i], b[2*i+1] = byte(c), byte(c>>8)
	}
	return b
}

// needles are what must never survive: the secret itself and its full
// encodings.
func needles(s string) []string {
	return []string{s,
		base64.StdEncoding.EncodeToString([]byte(s)), base64.URLEncoding.EncodeToString([]byte(s)),
		base64.StdEncoding.EncodeToString(utf16le(s)),
	}
}

func assertClean(t *testing.T, out string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		for _, n := range needles(s) {
			if strings.Contains(out, n) {
				t.Errorf("%q survives in:\n%s", n, out)
			}
		}
		for _, f := range redact.Forms(s) {
			if len(f) >= redact.MinFragment && strings.Contains(out, f) {
				t.Errorf("form %q of a secret survives in:\n%s", f, out)
			}
		}
	}
}

func TestTokenInEveryLayer(t *testing.T) {
	blob := base64.StdEncoding.EncodeToString([]byte(kubeconfig))
	line := "[IO.File]::WriteAllBytes('C:\\k\\bootstrap-kubeconfig', [Convert]::FromBase64String('" + blob + "'))"
	encoded := "powershell.exe -NoProfile -EncodedCommand " + base64.StdEncoding.EncodeToString(utf16le("# step: join-files\n"+line+"\n"))
	r := redact.New(token, secret, blob)
	for name, text := range map[string]string{
		"raw":              "error: token " + token + " rejected",
		"secret half":      "the secret " + secret + " is wrong",
		"kubeconfig":       kubeconfig,
		"script line":      "At line:3 char:1\r\n+ " + line + "\r\n+ ~~~~",
		"encoded command":  "cmd: " + encoded,
		"base64 url":       base64.URLEncoding.EncodeToString([]byte("x" + token)),
		"utf16 base64":     base64.StdEncoding.EncodeToString(utf16le("yy" + token + "z")),
		"in a longer blob": base64.StdEncoding.EncodeToString([]byte("prefix " + token + " suffix")),
	} {
		t.Run(name, func(t *testing.T) {
			out := r.String(text)
			assertClean(t, out, token, secret)
			if !strings.Contains(out, redact.Placeholder) {
				t.Errorf("nothing replaced in %q", out)
			}
		})
	}
}

// Windows PowerShell shows a long failing line in a 69-character window: a
// piece of a base64 literal, cut anywhere, must go too.
func TestFragmentOfAnEncodedSecret(t *testing.T) {
	blob := base64.StdEncoding.EncodeToString([]byte(kubeconfig))
	r := redact.New(token, blob)
	for cut := 0; cut+40 < len(blob); cut += 7 {
		window := "+ ... " + blob[cut:cut+40] + " ...\r\n+     ~~~~"
		if out := r.String(window); strings.Contains(out, blob[cut+5:cut+35]) {
			t.Fatalf("a piece of the kubeconfig's base64 survives: %q", out)
		}
	}
}

func TestPasswordLayers(t *testing.T) {
	const password = "S3cret-Passw0rd!"
	obscured := base64.StdEncoding.EncodeToString(utf16le(password + "AdministratorPassword"))
	unattend := "<UserAccounts><AdministratorPassword><Value>" + obscured + "</Value><PlainText>false</PlainText></AdministratorPassword></UserAccounts>"
	blob := base64.StdEncoding.EncodeToString([]byte(unattend))
	r := redact.New(password, obscured, blob)
	for _, text := range []string{password, obscured, unattend, blob, "x" + blob[17:90] + "y",
		"powershell.exe -EncodedCommand " + base64.StdEncoding.EncodeToString(utf16le("$c = '"+blob+"'"))} {
		out := r.String(text)
		assertClean(t, out, password, obscured)
		if strings.Contains(out, blob[20:60]) {
			t.Errorf("a piece of the answer file's base64 survives: %q", out)
		}
	}
}

func TestOrdinaryTextUntouched(t *testing.T) {
	r := redact.New(token, "abc" /* too short */, "")
	for _, s := range []string{
		"Start-Service : Service 'kubelet' cannot be started",
		"C:\\k\\bootstrap-kubeconfig written; abc; apiVersion: v1",
		"SGVsbG8sIHdvcmxkIQ== is base64 of something else",
	} {
		if got := r.String(s); got != s {
			t.Errorf("String(%q) = %q", s, got)
		}
	}
	var none *redact.Redactor
	if got := none.String(token); got != token {
		t.Errorf("a nil Redactor changed %q", got)
	}
}

func TestHidingEchoes(t *testing.T) {
	script := "# step: sysprep\n$ErrorActionPreference = 'Stop'\n[IO.File]::WriteAllBytes('C:\\x.xml', [Convert]::FromBase64String('QUJD'))\n"
	r := redact.New(token).HidingEchoesOf(script)
	out := r.String("Exception calling \"WriteAllBytes\" with \"2\" argument(s): \"Access denied.\"\r\n" +
		"At C:\\Windows\\Temp\\s.ps1:3 char:1\r\n" +
		"+ [IO.File]::WriteAllBytes('C:\\x.xml', [Convert]::FromBase64String('QU ...\r\n" +
		"+ ~~~~~~~~~~~~~~~~~~~~~~~~\r\n" +
		"    + CategoryInfo          : NotSpecified: (:) [], MethodInvocationException\r\n")
	if strings.Contains(out, "FromBase64String") || !strings.Contains(out, redact.EchoPlaceholder+"\r\n") {
		t.Errorf("the echoed line was not hidden:\n%s", out)
	}
	for _, keep := range []string{"Access denied", "At C:\\Windows\\Temp\\s.ps1:3 char:1", "+ ~~~~", "    + CategoryInfo"} {
		if !strings.Contains(out, keep) {
			t.Errorf("%q was lost:\n%s", keep, out)
		}
	}
}

func TestError(t *testing.T) {
	r := redact.New(token)
	orig := fmt.Errorf("step failed with %s: %w", token, context.DeadlineExceeded)
	err := r.Error(orig)
	if strings.Contains(err.Error(), token) || !strings.Contains(err.Error(), "step failed with") {
		t.Fatalf("Error() = %q", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("the deadline is no longer recognisable")
	}
	var wrapped interface{ Unwrap() error }
	if errors.As(err, &wrapped) {
		t.Fatal("the unredacted error is reachable through Unwrap")
	}
	clean := errors.New("nothing secret")
	if r.Error(clean) != clean { //nolint:errorlint // the very same error, not one wrapping it
		t.Fatal("an error without secrets was replaced")
	}
}

// Package redact keeps secrets out of what leaves a guest step: diagnostics,
// log fields, errors and evidence. A Redactor knows the secrets a step
// carried and replaces them, and the encoded forms in which they travel to a
// Windows guest, with Placeholder.
//
// The forms that reach a guest are layered: a bootstrap token sits in a
// kubeconfig that the step writes from a base64 literal, the whole script
// goes to powershell.exe as -EncodedCommand (base64 of UTF-16LE), and the
// administrator password sits in unattend.xml as base64 of UTF-16LE, itself
// base64 in the sysprep step. So a secret is searched for as itself and as
// the standard, URL-safe and UTF-16LE base64 of it at each of the three byte
// alignments a base64 text can hold it at (only the characters that depend
// on the secret alone: a secret inside a longer encoded text is found too).
// Callers list the outer layers they build (the base64 text of the
// kubeconfig, the obscured password) as secrets of their own.
//
// What a guest echoes can be a piece of a secret: Windows PowerShell shows a
// failing source line in a 69-character window (PositionUtilities.VerboseMessage),
// which can cut a base64 literal anywhere. So within any run of base64 or
// token characters, every MinFragment characters that also occur in a
// secret's form are replaced too.
//
// The package is pure: no I/O, nothing Terraform- or transport-specific.
package redact

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"sort"
	"strings"
	"sync"
	"unicode/utf16"
)

// Placeholder replaces every secret.
const Placeholder = "(sensitive value)"

// MinSecret is the shortest secret searched for: shorter ones would replace
// ordinary words.
const MinSecret = 4

// MinFragment is the shortest piece of a secret's form replaced on its own.
const MinFragment = 12

// Redactor replaces secrets; make one with New. A nil Redactor replaces
// nothing.
type Redactor struct {
	forms []string // longest first
	grams *grams
	// source holds the lines of a script whose echo (PowerShell's "+ <line>"
	// position message) is hidden.
	source []string
}

// New returns a Redactor for secrets; empty and too short ones are ignored.
func New(secrets ...string) *Redactor {
	r := &Redactor{}
	seen := map[string]bool{}
	add := func(f string) {
		if len(f) >= MinSecret && !seen[f] {
			seen[f] = true
			r.forms = append(r.forms, f)
		}
	}
	for _, s := range secrets {
		if len(s) < MinSecret {
			continue
		}
		add(s)
		for _, f := range Forms(s) {
			add(f)
		}
	}
	sort.SliceStable(r.forms, func(i, j int) bool { return len(r.forms[i]) > len(r.forms[j]) })
	r.grams = &grams{}
	return r
}

// grams are the MinFragment-long pieces of the forms, indexed the first
// time a text has a run long enough to hold one.
type grams struct {
	once sync.Once
	set  map[string]struct{}
}

func (r *Redactor) hasGram(s string) bool {
	r.grams.once.Do(func() {
		r.grams.set = map[string]struct{}{}
		for _, f := range r.forms {
			for p := 0; p+MinFragment <= len(f); p++ {
				r.grams.set[f[p:p+MinFragment]] = struct{}{}
			}
		}
	})
	_, ok := r.grams.set[s]
	return ok
}

// HidingEchoesOf makes the Redactor also hide PowerShell's echo of the
// lines of script: a line of output "+ <text>" (the position message of an
// error record, possibly cut by "... " and " ...") whose text is part of the
// script is replaced. Used for steps that carry secrets: their commands are
// never echoed.
func (r *Redactor) HidingEchoesOf(script string) *Redactor {
	out := &Redactor{forms: r.forms, grams: r.grams}
	for _, l := range strings.Split(strings.ReplaceAll(script, "\r\n", "\n"), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out.source = append(out.source, l)
		}
	}
	return out
}

// Empty reports whether the Redactor replaces nothing.
func (r *Redactor) Empty() bool { return r == nil || len(r.forms) == 0 && len(r.source) == 0 }

// EchoPlaceholder replaces an echoed line of a script that carries secrets.
const EchoPlaceholder = "+ (line of the step's script not shown: the step carries secrets)"

// String returns s with every secret, every form of one and every echoed
// script line replaced.
func (r *Redactor) String(s string) string {
	if r.Empty() || s == "" {
		return s
	}
	if len(r.source) > 0 {
		s = r.hideEchoes(s)
	}
	var spans [][2]int
	for _, f := range r.forms {
		for from := 0; ; {
			i := strings.Index(s[from:], f)
			if i < 0 {
				break
			}
			spans = append(spans, [2]int{from + i, from + i + len(f)})
			from += i + 1
		}
	}
	if r.grams != nil {
		spans = append(spans, r.fragments(s)...)
	}
	return replaceSpans(s, spans)
}

// fragments finds the parts of runs of base64 or token characters that are
// pieces of a secret's form: every MinFragment-long window of a run that
// occurs in a form is replaced, so a piece is found whatever surrounds it.
func (r *Redactor) fragments(s string) [][2]int {
	var spans [][2]int
	for i := 0; i < len(s); {
		if !fragmentChar(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && fragmentChar(s[j]) {
			j++
		}
		for p := i; p+MinFragment <= j; p++ {
			if r.hasGram(s[p : p+MinFragment]) {
				spans = append(spans, [2]int{p, p + MinFragment})
			}
		}
		i = j
	}
	return spans
}

func fragmentChar(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' ||
		c == '+' || c == '/' || c == '=' || c == '-' || c == '_' || c == '.'
}

// replaceSpans replaces the union of spans with one Placeholder each.
func replaceSpans(s string, spans [][2]int) string {
	if len(spans) == 0 {
		return s
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i][0] < spans[j][0] })
	var b strings.Builder
	last := 0
	for k := 0; k < len(spans); {
		start, end := spans[k][0], spans[k][1]
		for k++; k < len(spans) && spans[k][0] <= end; k++ {
			end = max(end, spans[k][1])
		}
		b.WriteString(s[last:start])
		b.WriteString(Placeholder)
		last = end
	}
	b.WriteString(s[last:])
	return b.String()
}

// hideEchoes replaces "+ <text>" lines whose text is part of a source line.
func (r *Redactor) hideEchoes(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		t := strings.TrimRight(l, "\r")
		// The echo starts the line; "    + CategoryInfo" and the like are
		// indented.
		rest, ok := strings.CutPrefix(t, "+ ")
		if !ok {
			continue
		}
		rest = strings.TrimSpace(rest)
		for _, cut := range []string{"... ", "\u2026 "} {
			rest = strings.TrimPrefix(rest, cut)
		}
		for _, cut := range []string{" ...", " \u2026"} {
			rest = strings.TrimSuffix(rest, cut)
		}
		if strings.Trim(rest, "~ ") == "" {
			continue // the marks under the position
		}
		for _, src := range r.source {
			if strings.Contains(src, rest) {
				lines[i] = EchoPlaceholder + l[len(t):]
				break
			}
		}
	}
	return strings.Join(lines, "\n")
}

// Error returns err with its text redacted, or err itself when nothing
// changes. The original stays reachable only through errors.Is (a deadline,
// a cancellation), never through Unwrap or errors.As, so no caller can print
// it unredacted.
func (r *Redactor) Error(err error) error {
	if err == nil || r.Empty() {
		return err
	}
	msg := err.Error()
	red := r.String(msg)
	if red == msg {
		return err
	}
	return &redactedError{msg: red, orig: err}
}

type redactedError struct {
	msg  string
	orig error
}

func (e *redactedError) Error() string { return e.msg }

// Is lets errors.Is(err, context.DeadlineExceeded) and the like still work.
func (e *redactedError) Is(target error) bool { return errors.Is(e.orig, target) }

// Forms returns the encoded forms in which s can travel: the standard and
// URL-safe base64 of its UTF-8 bytes and the standard base64 of its UTF-16LE
// text (what -EncodedCommand and unattend.xml's obscured passwords carry),
// each as the characters that depend on s alone at the three alignments, so
// they match s wherever it sits inside a longer encoded text.
func Forms(s string) []string {
	var out []string
	utf8 := []byte(s)
	u := utf16.Encode([]rune(s))
	le := make([]byte, 2*len(u))
	for i, c := range u {
		binary.LittleEndian.PutUint16(le[2*i:], c)
	}
	for _, enc := range []struct {
		e   *base64.Encoding
		raw []byte
	}{{base64.RawStdEncoding, utf8}, {base64.RawURLEncoding, utf8}, {base64.RawStdEncoding, le}} {
		for align := 0; align < 3; align++ {
			if core := aligned(enc.e, enc.raw, align); len(core) >= MinSecret {
				out = append(out, core)
			}
		}
	}
	return out
}

// aligned encodes raw after align filler bytes and keeps the characters
// whose six bits all come from raw.
func aligned(e *base64.Encoding, raw []byte, align int) string {
	buf := append(make([]byte, align), raw...)
	enc := e.EncodeToString(buf)
	first := (8*align + 5) / 6
	last := 8 * len(buf) / 6
	if first >= last || last > len(enc) {
		return ""
	}
	return enc[first:last]
}

package bootstrap

import (
	"bytes"
	"embed"
	"fmt"
	"strings"
	"text/template"

	"github.com/wincluster/terraform-provider-windows/internal/psquote"
	"github.com/wincluster/terraform-provider-windows/internal/redact"
)

// RebootMarker is printed by a step right before it restarts the computer, so
// the caller knows to wait for the host to come back and reconnect.
const RebootMarker = "BOOTSTRAP-REBOOT-REQUESTED"

// Step is one named, idempotent PowerShell script.
type Step struct {
	Name   string
	Script string
	// MayReboot says the step restarts the computer when it prints
	// RebootMarker; the caller then reconnects before the next step.
	MayReboot bool
	// Rerunnable says running the step again after it was interrupted
	// converges (it reads, or rewrites the same state): a step whose
	// connection was cut mid-reply (the guest restarted under it) is run
	// again after reconnecting. Any other step fails there.
	Rerunnable bool
	// RepeatAfterReboot says the step runs again once the computer is back
	// from the restart it asked for (RebootMarker), until it asks for none:
	// the online update step, whose next search may find updates that only
	// apply once the last ones are installed.
	RepeatAfterReboot bool
	// Secrets are the secrets the script carries, in every form it holds
	// them (a token, and the base64 text of the file that embeds it): the
	// runner replaces them, and their encodings, in everything that leaves
	// the step, and never echoes the script of a step that has any.
	Secrets []string
	// Files are written after Script succeeds (it prepares and protects
	// their directories), each through the transport's upload (SFTP,
	// VMware Tools' file transfer, or a PowerShell reading base64 lines
	// on its stdin over WinRM), never as text inside a script: a file that
	// holds a secret must not travel in a script, which PowerShell's
	// script block logging may write to the Operational event log
	// (JoinSteps).
	Files []File
}

// File is one file a step writes on the guest.
type File struct {
	Path    string
	Content []byte
}

// Sensitive reports whether the step carries secrets.
func (s Step) Sensitive() bool { return len(s.Secrets) > 0 }

// Redactor scrubs what leaves the step (its output, its errors): its
// secrets and their encoded forms and, for a sensitive step, PowerShell's
// echo of its source lines.
func (s Step) Redactor() *redact.Redactor {
	r := redact.New(s.Secrets...)
	if s.Sensitive() {
		r = r.HidingEchoesOf(s.Script)
	}
	return r
}

//go:embed templates/*.ps1.tmpl
var templateFS embed.FS

var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"ps":    psquote.Single,
	"join":  strings.Join,
	"upper": strings.ToUpper,
	"dict":  dict,
}).ParseFS(templateFS, "templates/*.ps1.tmpl"))

// dict pairs a sub-template's arguments (key, value, ...) into its data.
func dict(kv ...any) map[string]any {
	m := make(map[string]any, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// render executes the named template into a step script headed by its step
// comment.
func render(name, tmpl string, data any) (string, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# step: %s\n$ErrorActionPreference = 'Stop'\n", name)
	if err := templates.ExecuteTemplate(&b, tmpl+".ps1.tmpl", data); err != nil {
		return "", fmt.Errorf("rendering step %s: %w", name, err)
	}
	return b.String(), nil
}

package bootstrap

import (
	"bytes"
	"embed"
	"fmt"
	"strings"
	"text/template"
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
	// Sensitive steps carry secrets (passwords, tokens): callers must not log
	// their script text.
	Sensitive bool
}

//go:embed templates/*.ps1.tmpl
var templateFS embed.FS

var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"ps":    psQuote,
	"join":  strings.Join,
	"upper": strings.ToUpper,
}).ParseFS(templateFS, "templates/*.ps1.tmpl"))

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

// psQuote makes s a PowerShell single-quoted literal: nothing inside expands,
// and a quote is written twice.
func psQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

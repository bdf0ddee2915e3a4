package winsim

import (
	"bytes"
	"fmt"
	"html"
	"net/http"
	"strconv"
)

// SetFaults replaces the injected faults. Clearing RefuseConnections brings the
// listeners back; setting it closes them (existing connections are dropped).
func (h *Host) SetFaults(f Faults) {
	h.mu.Lock()
	was := h.faults.RefuseConnections
	h.faults = f
	h.fired = map[int]int{}
	h.mu.Unlock()
	switch {
	case f.RefuseConnections && !was:
		h.goDown()
	case !f.RefuseConnections && was:
		h.comeUp()
	}
}

// Faults returns the faults in force.
func (h *Host) Faults() Faults {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.faults
}

func (h *Host) authFails() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.faults.FailAuth
}

// takeFault returns the first step fault matching a script, counting its use.
func (h *Host) takeFault(step, text string) (StepFault, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, f := range h.faults.Steps {
		match := (f.Step != "" && f.Step == step) || (f.Match != nil && f.Match.MatchString(text))
		if !match {
			continue
		}
		if f.Times > 0 && h.fired[i] >= f.Times {
			continue
		}
		h.fired[i]++
		return f, true
	}
	return StepFault{}, false
}

// rebootMidReplyFired is the h.fired key of Faults.RebootMidReply.
const rebootMidReplyFired = -1

// takeRebootMidReply reports whether Faults.RebootMidReply applies to a
// command line (a PowerShell script matched by its step comment or text),
// counting its use.
func (h *Host) takeRebootMidReply(line string) bool {
	text := line
	if inv, ok := h.parsePowerShell(line); ok && inv.script != "" {
		text = inv.script
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	f := h.faults.RebootMidReply
	if f == nil {
		return false
	}
	step := stepName(text)
	match := (f.Step == "" && f.Match == nil) || (f.Step != "" && f.Step == step) || (f.Match != nil && f.Match.MatchString(text))
	if !match || (f.Times > 0 && h.fired[rebootMidReplyFired] >= f.Times) {
		return false
	}
	h.fired[rebootMidReplyFired]++
	return true
}

// cutReplyAndReboot sends the headers and the first half of a SOAP reply,
// then drops the connection and reboots the host, as Windows going down
// under WinRM looks from the client: a response whose body ends early.
// It does not return (net/http's ErrAbortHandler ends the handler).
func (h *Host) cutReplyAndReboot(w http.ResponseWriter, action, relatesTo, body string) {
	var full bytes.Buffer
	fmt.Fprintf(&full, envelopeTemplate, action, newGUID(), html.EscapeString(relatesTo), body)
	w.Header().Set("Content-Type", soapContent)
	w.Header().Set("Content-Length", strconv.Itoa(full.Len()))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(full.Bytes()[:full.Len()/2])
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
	go h.Reboot()
	panic(http.ErrAbortHandler)
}

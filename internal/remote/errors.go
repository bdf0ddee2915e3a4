package remote

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// Step names the phase of a connection that failed.
type Step string

// Steps.
const (
	StepDial    Step = "dial"
	StepTLS     Step = "TLS"
	StepAuth    Step = "auth"
	StepHostKey Step = "host key"
	StepCommand Step = "command"
	// StepReady: waiting for the guest to take guest operations (vmtools).
	StepReady Step = "guest operations readiness"
)

// ConnectError says where reaching a host failed and what to check.
type ConnectError struct {
	Protocol string // "winrm https", "winrm http", "ssh", "vmtools"
	Host     string // vmtools: "virtual machine vm-42 (address)"
	Port     int
	Step     Step
	Err      error
	Attempts int // Connect attempts made, when it gave up retrying
	// Elapsed is how long Connect kept trying, when it gave up retrying.
	Elapsed time.Duration
	// DialTimeout bounded each TCP connection attempt (Config.DialTimeout).
	DialTimeout time.Duration
}

func (e *ConnectError) Error() string {
	attempts := ""
	switch {
	case e.Attempts > 1 && e.Elapsed > 0:
		attempts = fmt.Sprintf(" (after %d attempts in %s)", e.Attempts, e.Elapsed.Round(time.Second))
	case e.Attempts > 1:
		attempts = fmt.Sprintf(" (after %d attempts)", e.Attempts)
	}
	where := hostPort(e.Host, e.Port)
	if e.Protocol == vmtoolsLabel {
		where = e.Host
	}
	return fmt.Sprintf("%s %s: %s failed%s: %v; %s", e.Protocol, where, e.Step, attempts, e.Err, e.hint())
}

// vmtoolsLabel is the vmtools transport's Protocol in errors.
const vmtoolsLabel = "vmtools"

func (e *ConnectError) Unwrap() error { return e.Err }

func (e *ConnectError) hint() string {
	if e.Protocol == vmtoolsLabel {
		return e.vmtoolsHint()
	}
	switch e.Step {
	case StepDial:
		if dialTimedOut(e.Err) {
			return e.droppedHint()
		}
		listener := "the WinRM listener (winrm enumerate winrm/config/listener)"
		if e.Protocol == "ssh" {
			listener = "the sshd service"
		}
		return fmt.Sprintf("check that the host is up at that address, that the firewall allows TCP %d, and %s", e.Port, listener)
	case StepTLS:
		var pin *CertificatePinError
		if errors.As(e.Err, &pin) {
			return "the listener's certificate is not the one pinned; trust another one only after checking it over a channel that authenticates the guest (its console, or vCenter's guest operations)"
		}
		var hn x509.HostnameError
		if errors.As(e.Err, &hn) && hn.Certificate != nil {
			return notThisGuestHint(e.Host, hn.Certificate)
		}
		return "check that the CA certificate given signed the listener's certificate and that the certificate names the host (or set the TLS server name); skipping verification (insecure) is an explicit opt-in"
	case StepAuth:
		if e.Protocol == "ssh" {
			return "check the user name and the password or private key (authorized_keys on the host)"
		}
		return "check the user name and password, and that the listener allows this authentication scheme (Basic needs HTTPS and winrm/config/service/auth Basic=true; NTLM is Negotiate, and over HTTP its messages are encrypted, as a stock listener with AllowUnencrypted=false requires)"
	case StepHostKey:
		return "the host's SSH key is not the one trusted; trust a new key only after verifying it out of band (on the host's console)"
	}
	return "the session opened but a trivial command failed: check that PowerShell runs for this user"
}

// dialTimedOut reports whether a TCP connection attempt got no answer at
// all before its timeout: its SYN was dropped (a refusal is an answer).
func dialTimedOut(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial" && op.Timeout()
}

// droppedHint explains connection attempts that went unanswered: a
// firewall that drops them (Windows Defender Firewall blocks what no
// inbound rule admits and, in stealth mode, its default, answers nothing:
// the firewall CSP's DefaultInboundAction and DisableStealthMode) or no
// route from the runner to the guest.
func (e *ConnectError) droppedHint() string {
	within := "within the dial timeout"
	if e.DialTimeout > 0 {
		within = fmt.Sprintf("within the dial timeout of %s", e.DialTimeout)
	}
	stock := ""
	if e.Protocol == "winrm http" {
		stock = "; a stock Windows Server on a Public network admits WinRM over HTTP from its local subnet only, " +
			"so not from a CI runner or a Terraform Cloud agent on another subnet"
	}
	return fmt.Sprintf("no answer %s: the connection attempts were dropped, not refused. A firewall drops them, the guest's "+
		"(Windows Defender Firewall drops what no inbound rule admits%s) or one on the way, or there is no route from where Terraform "+
		"runs to the guest's subnet. Open TCP %d to the runner, run Terraform from the guests' subnet, or use transport type = "+
		"\"vmtools\" (the default): vCenter's guest operations reach the guest without a network path to it", within, stock, e.Port)
}

// notThisGuestHint explains a certificate issued for another name than the
// guest's: in practice the one certificate someone made on the template,
// which every clone carries on its disk together with its private key.
func notThisGuestHint(host string, cert *x509.Certificate) string {
	names := append([]string{}, cert.DNSNames...)
	for _, ip := range cert.IPAddresses {
		names = append(names, ip.String())
	}
	if len(names) == 0 && cert.Subject.CommonName != "" {
		names = append(names, cert.Subject.CommonName)
	}
	return fmt.Sprintf("the guest's WinRM HTTPS certificate is issued for %s, not for this guest (%s). A certificate made on a "+
		"template (for the template's name) is cloned with the template's disk: every clone presents the same certificate and "+
		"holds its private key, so it cannot prove which machine answers, and verifying it by that name (tls_server_name) "+
		"would trust every clone and anyone holding a copy of the template. Use the vmtools transport (vCenter's guest "+
		"operations: no listener or certificate on the guest), or WinRM over the HTTP listener with NTLM message encryption "+
		"(https = false, port 5985), or give each clone its own certificate at its first boot (for its own name and address, "+
		"bound to the HTTPS listener) before the provider connects: https_bootstrap = \"vmtools\" has the provider do that on a "+
		"template without an HTTPS listener, and pins the certificate", strings.Join(names, ", "), host)
}

func asConnectError(err error) (*ConnectError, bool) {
	var ce *ConnectError
	ok := errors.As(err, &ce)
	return ce, ok
}

func (e *ConnectError) vmtoolsHint() string {
	switch e.Step {
	case StepReady, StepDial:
		return "guest operations need the VM powered on with VMware Tools running in the guest (vSphere: the VM's guest.toolsRunningStatus and guest.guestOperationsReady)"
	case StepAuth:
		return "vCenter passed on the guest's refusal of the credentials (InvalidGuestLogin): check the administrator user name and password of the guest; the vCenter user also needs the VirtualMachine.GuestOperations privileges (Query, Modify, Execute) on the VM"
	}
	return "the guest operations worked but a trivial command failed: check that powershell.exe runs for this user"
}

// retryable reports whether Connect should try again: only while the host is
// unreachable (or goes away under the first command: a restart), never for
// credentials, certificates or host keys.
func retryable(err error) bool {
	ce, ok := asConnectError(err)
	return ok && (ce.Step == StepDial || errors.Is(ce.Err, ErrConnectionCut))
}

// ErrConnectionCut is a command whose reply stopped midway: the
// connection dropped before its exit status came, as when Windows restarts
// under a running command (the WinRM service stops with the system and its
// connections close). Whether the command ran to its end is unknown; a
// caller may connect again and, when running it twice is harmless, run it
// again.
var ErrConnectionCut = errors.New("the connection was cut before the command's exit status came (the host may have restarted)")

// ExitError is a script that ran and exited non-zero.
type ExitError struct {
	ExitCode int
	Stdout   string
	Stderr   string // CLIXML decoded
}

// tailLines is how many lines of output an ExitError message carries.
const tailLines = 12

func (e *ExitError) Error() string {
	out := e.Stderr
	if strings.TrimSpace(out) == "" {
		out = e.Stdout
	}
	tail := LastLines(out, tailLines)
	if tail == "" {
		return fmt.Sprintf("script exited with code %d and no output", e.ExitCode)
	}
	return fmt.Sprintf("script exited with code %d: %s", e.ExitCode, tail)
}

// Output is the last n non-empty lines of what the script printed: stderr
// (CLIXML decoded) when it has any, else stdout. Callers quote it as the
// evidence of a failed step.
func (e *ExitError) Output(n int) string {
	out := e.Stderr
	if strings.TrimSpace(out) == "" {
		out = e.Stdout
	}
	return LastLines(out, n)
}

// LastLines returns the last n non-empty lines of s, CRLF or LF.
func LastLines(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, strings.TrimRight(l, " \t"))
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// HostKeyError is an SSH host key that does not match the trusted one. It is
// never retried and never silently accepted.
type HostKeyError struct {
	Address   string
	Want      string // SHA256 fingerprint trusted
	Got       string // SHA256 fingerprint presented
	Presented string // the key presented, authorized_keys format
	// Required says Want was given (Config.HostKey); otherwise it was
	// recorded at this run's first connection.
	Required bool
}

func (e *HostKeyError) Error() string {
	src := "trusted at the first connection"
	if e.Required {
		src = "required"
	}
	return fmt.Sprintf("REMOTE HOST KEY MISMATCH for %s: the key %s is %s but the host presented %s; this may be an attack (man in the middle) or a host whose keys were regenerated, and the connection was refused",
		e.Address, src, e.Want, e.Got)
}

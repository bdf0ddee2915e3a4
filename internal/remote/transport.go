package remote

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// Transport runs scripts on one host and copies files to it. Implementations
// are safe for concurrent use.
type Transport interface {
	// Run runs a PowerShell script. A non-zero exit code returns the Result
	// and an *ExitError.
	Run(ctx context.Context, script string) (Result, error)
	// Upload copies size bytes from r to dest (a Windows path) and checks
	// their SHA-256 (hex) on the host. It sends nothing and reports skipped
	// when dest already has that hash. size may be -1 when unknown.
	Upload(ctx context.Context, r io.Reader, size int64, sha256hex, dest string) (skipped bool, err error)
	// Close releases connections; running operations are cancelled.
	Close() error
}

// Result is what a script printed and its exit code. Stderr has PowerShell's
// CLIXML decoded to text.
type Result struct {
	Stdout   string
	Stderr   string
	ExitCode int
}

// Connect opens a transport and proves it with a trivial command. It retries
// while the host is unreachable (booting, listener not up yet) with
// exponential backoff until ctx is done (or cfg.ConnectTimeout when ctx has no
// deadline). Authentication, certificate and host key failures are not retried.
func Connect(ctx context.Context, cfg Config) (Transport, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.ConnectTimeout)
		defer cancel()
	}
	var t Transport
	err := retry(ctx, cfg.Backoff, func() error {
		var err error
		switch cfg.Protocol {
		case ProtocolSSH:
			t, err = dialSSH(ctx, cfg)
		case ProtocolVMTools:
			t, err = dialVMTools(ctx, cfg)
		default:
			t, err = newWinRM(cfg)
		}
		if err != nil {
			return err
		}
		if err := prove(ctx, cfg, t); err != nil {
			_ = t.Close()
			t = nil
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// proveScript is the trivial command that proves a session.
const proveScript = "Write-Output 'ready'"

func prove(ctx context.Context, cfg Config, t Transport) error {
	attemptCtx, cancel := context.WithTimeout(ctx, cfg.DialTimeout+cfg.OperationTimeout+5*time.Second)
	defer cancel()
	_, err := t.Run(attemptCtx, proveScript)
	if err == nil {
		return nil
	}
	if ce, ok := asConnectError(err); ok {
		return ce
	}
	return &ConnectError{Protocol: cfg.label(), Host: cfg.target(), Port: cfg.port(), Step: StepCommand, Err: err}
}

func hostPort(host string, port int) string {
	return net.JoinHostPort(host, strconv.Itoa(port))
}

func (c Config) label() string {
	switch c.Protocol {
	case ProtocolSSH:
		return "ssh"
	case ProtocolVMTools:
		return vmtoolsLabel
	}
	if c.HTTPS {
		return "winrm https"
	}
	return "winrm http"
}

func (c Config) String() string {
	if c.Protocol == ProtocolVMTools {
		return c.label() + " " + c.target()
	}
	return fmt.Sprintf("%s %s", c.label(), hostPort(c.Host, c.port()))
}

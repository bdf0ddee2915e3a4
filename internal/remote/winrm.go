package remote

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/masterzen/winrm"
)

// winrmTransport runs each operation on its own winrm.Client (the library's
// clients are not meant to be shared by concurrent commands) over one shared,
// pre-authenticated connection pool.
type winrmTransport struct {
	cfg      Config
	url      string
	endpoint *winrm.Endpoint
	http     *http.Client
	params   winrm.Parameters // a copy: winrm.DefaultParameters is a shared global

	base   context.Context // cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// cleanupGrace is how long a cancelled command may take to send its Signal
// and Delete in the background before its requests are aborted.
func (t *winrmTransport) cleanupGrace() time.Duration { return t.cfg.OperationTimeout + 5*time.Second }

func newWinRM(cfg Config) (*winrmTransport, error) {
	ep := &winrm.Endpoint{Host: cfg.Host, Port: cfg.port(), HTTPS: cfg.HTTPS, Insecure: cfg.Insecure,
		TLSServerName: cfg.TLSServerName, CACert: cfg.CACertPEM, Timeout: cfg.OperationTimeout + cfg.DialTimeout}
	scheme := "http"
	if cfg.HTTPS {
		scheme = "https"
	}
	url := fmt.Sprintf("%s://%s/wsman", scheme, hostPort(cfg.Host, cfg.port()))
	hc, err := newHTTPClient(cfg, url)
	if err != nil {
		return nil, err
	}
	params := *winrm.DefaultParameters
	params.Timeout = isoDuration(cfg.OperationTimeout)
	base, cancel := context.WithCancel(context.Background())
	return &winrmTransport{cfg: cfg, url: url, endpoint: ep, http: hc, params: params, base: base, cancel: cancel}, nil
}

// isoDuration formats an xs:duration (PT5.000S).
func isoDuration(d time.Duration) string {
	return fmt.Sprintf("PT%.3fS", d.Seconds())
}

// client returns a fresh library client whose requests use ctx.
func (t *winrmTransport) client(ctx context.Context) (*winrm.Client, error) {
	params := t.params
	params.TransportDecorator = func() winrm.Transporter { return &opTransporter{t: t, ctx: ctx} }
	return winrm.NewClientWithParameters(t.endpoint, t.cfg.User, t.cfg.Password, &params)
}

// Run implements Transport.
func (t *winrmTransport) Run(ctx context.Context, script string) (Result, error) {
	line := encodedCommand(script)
	if line == "" {
		// Too long for cmd.exe: upload the script and run the file.
		path := tempScriptPath()
		body := []byte(utf8BOM + script)
		if _, err := upload(ctx, t, bytes.NewReader(body), int64(len(body)), sha256Hex(body), path, false); err != nil {
			return Result{}, fmt.Errorf("%s: uploading a %d-character script: %w", t.cfg, len(script), err)
		}
		defer t.removeNow(ctx, path)
		line = fileCommand(path)
	}
	res, err := t.command(ctx, line, nil)
	return finish(t.cfg, res, err)
}

// removeNow deletes a temporary script before Run returns, after a failure
// or a cancelled ctx too: a script may carry a secret (the join step's
// bootstrap token) that must not outlive its step on the guest. It is bounded
// by cleanupGrace; its failure (the guest gone) is not the step's.
func (t *winrmTransport) removeNow(ctx context.Context, path string) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), t.cleanupGrace())
	defer cancel()
	_, _ = t.command(rctx, encodedCommand(removeScript(path)), nil)
}

// removeLater deletes a temporary file in the background (a cancelled caller
// must not wait for it); its failure is harmless.
func (t *winrmTransport) removeLater(path string) {
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		ctx, cancel := context.WithTimeout(t.base, t.cleanupGrace())
		defer cancel()
		_, _ = t.command(ctx, encodedCommand(removeScript(path)), nil)
	}()
}

// finish decodes CLIXML and turns a non-zero exit into an *ExitError.
func finish(cfg Config, res Result, err error) (Result, error) {
	if err != nil {
		if _, ok := asConnectError(err); ok {
			return res, err
		}
		return res, fmt.Errorf("%s: running script: %w", cfg, err)
	}
	res.Stderr = DecodeCLIXML(res.Stderr)
	if res.ExitCode != 0 {
		return res, &ExitError{ExitCode: res.ExitCode, Stdout: res.Stdout, Stderr: res.Stderr}
	}
	return res, nil
}

// command runs one command line. It returns as soon as ctx is done; the
// library then finishes in the background: its Receive poll ends within
// OperationTimeout, it signals the command to terminate and deletes the shell,
// and a hard deadline aborts whatever is left.
func (t *winrmTransport) command(ctx context.Context, line string, stdin io.Reader) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	if err := t.base.Err(); err != nil {
		return Result{}, fmt.Errorf("%s: transport closed", t.cfg)
	}
	hard, hardCancel := context.WithCancel(t.base)
	stopGrace := context.AfterFunc(ctx, func() { time.AfterFunc(t.cleanupGrace(), hardCancel) })
	client, err := t.client(hard)
	if err != nil {
		stopGrace()
		hardCancel()
		return Result{}, err
	}
	type outcome struct {
		res Result
		err error
	}
	done := make(chan outcome, 1)
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		defer hardCancel()
		defer stopGrace()
		res, err := runCommand(ctx, client, line, stdin)
		done <- outcome{res, err}
	}()
	select {
	case o := <-done:
		if o.err != nil && ctx.Err() != nil {
			return o.res, ctx.Err()
		}
		return o.res, o.err
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
}

// runCommand is the library's RunWithContextWithInput with one change: when
// ctx ends, the command is signalled at once (on another pooled connection)
// instead of after the Receive poll in flight returns, so a cancelled step
// stops on the host within a round trip.
func runCommand(ctx context.Context, client *winrm.Client, line string, stdin io.Reader) (Result, error) {
	shell, err := client.CreateShell()
	if err != nil {
		return Result{}, err
	}
	defer func() { _ = shell.Close() }() // the command's result is complete; a shell left open times out on the host
	// Background: the library would also close the command on ctx, racing ours.
	cmd, err := shell.ExecuteWithContext(context.Background(), line)
	if err != nil {
		return Result{}, err
	}
	stop := context.AfterFunc(ctx, func() { _ = cmd.Close() })
	defer stop()
	var wg sync.WaitGroup
	var stdout, stderr bytes.Buffer
	wg.Add(2)
	if stdin != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = io.Copy(cmd.Stdin, stdin)
			_ = cmd.Stdin.Close()
		}()
	}
	// The library ends both streams with the error of a Receive that
	// failed (a connection cut mid-reply) and reports no error of its own:
	// its exit code is then 0, or its marker 16001 for an EOF.
	var outErr, errErr error
	go func() { defer wg.Done(); _, outErr = io.Copy(&stdout, cmd.Stdout) }()
	go func() { defer wg.Done(); _, errErr = io.Copy(&stderr, cmd.Stderr) }()
	cmd.Wait()
	wg.Wait()
	res := Result{Stdout: stdout.String(), Stderr: stderr.String(), ExitCode: cmd.ExitCode()}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if err := cmp.Or(outErr, errErr); err != nil {
		return Result{Stdout: res.Stdout, Stderr: res.Stderr}, fmt.Errorf("%w: %w", ErrConnectionCut, err)
	}
	if stop() {
		_ = cmd.Close() // tell the host we are done with the command (Signal)
	}
	return res, nil
}

// Upload implements Transport.
func (t *winrmTransport) Upload(ctx context.Context, r io.Reader, size int64, sha256hex, dest string) (bool, error) {
	return upload(ctx, t, r, size, sha256hex, dest, true)
}

// put writes r to path (uploader): a PowerShell decodes base64 lines from
// its stdin into the file, as WinRM has no file transfer of its own.
func (t *winrmTransport) put(ctx context.Context, r io.Reader, path string) error {
	res, err := t.command(ctx, encodedCommand(stdinUploadScript(path)), &base64Lines{r: r})
	if err != nil {
		return err
	}
	_, err = finish(t.cfg, res, nil)
	return err
}

// stdinUploadScript decodes base64 lines read from stdin into path.
func stdinUploadScript(path string) string {
	return "$f = [IO.File]::Create(" + quotePS(path) + "); try { foreach ($l in $input) { if ($l) { " +
		"$b = [Convert]::FromBase64String($l); $f.Write($b, 0, $b.Length) } } } finally { $f.Close() }"
}

// uploadLineBytes is the raw size of one base64 line. Lines are independent,
// so each decodes on its own, and large so PowerShell's loop runs rarely.
const uploadLineBytes = 48 << 10

// base64Lines encodes a reader as CRLF-terminated base64 lines. Its WriteTo
// hands the library large writes, so each Send is full (io.Copy would
// otherwise send 32 KiB at a time).
type base64Lines struct {
	r   io.Reader
	buf []byte
}

func (b *base64Lines) Read(p []byte) (int, error) {
	if len(b.buf) == 0 {
		if err := b.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, b.buf)
	b.buf = b.buf[n:]
	return n, nil
}

func (b *base64Lines) fill() error {
	raw := make([]byte, uploadLineBytes)
	n, err := io.ReadFull(b.r, raw)
	if n == 0 {
		if err == io.ErrUnexpectedEOF || err == nil {
			err = io.EOF
		}
		return err
	}
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return err
	}
	enc := make([]byte, base64.StdEncoding.EncodedLen(n)+2)
	base64.StdEncoding.Encode(enc, raw[:n])
	copy(enc[len(enc)-2:], "\r\n")
	b.buf = enc
	return nil
}

// WriteTo writes in chunks of about one Send each.
func (b *base64Lines) WriteTo(w io.Writer) (int64, error) {
	const target = 150 << 10
	var total int64
	out := make([]byte, 0, target+uploadLineBytes*2)
	for {
		for len(out) < target-uploadLineBytes*4/3 {
			if len(b.buf) == 0 {
				if err := b.fill(); errors.Is(err, io.EOF) {
					break
				} else if err != nil {
					return total, err
				}
			}
			out = append(out, b.buf...)
			b.buf = nil
		}
		if len(out) == 0 {
			return total, nil
		}
		n, err := w.Write(out)
		total += int64(n)
		if err != nil {
			return total, err
		}
		out = out[:0]
	}
}

// Close implements Transport.
func (t *winrmTransport) Close() error {
	t.cancel()
	t.wg.Wait()
	t.http.CloseIdleConnections()
	return nil
}

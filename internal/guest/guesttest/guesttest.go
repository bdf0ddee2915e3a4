// Package guesttest is an in-memory Windows guest for the orchestrators'
// unit tests: a remote.Transport that answers each bootstrap step by its
// name and records what ran. It models no PowerShell (internal/sandbox/winsim does,
// for the acceptance tests): a step does what its Reply says.
package guesttest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/wincluster/terraform-provider-windows/internal/remote"
)

// DefaultBuild is what the windows-build step reports unless told otherwise.
const DefaultBuild = "10.0.20348.2340"

// Reply is how the guest answers a step.
type Reply struct {
	Stdout   string
	Stderr   string
	ExitCode int   // non-zero: the script ran and failed (*remote.ExitError)
	Err      error // a transport failure
	// Hang blocks the step until its context ends (a step that never
	// finishes), returning the context's error.
	Hang bool
	// Do runs first, with the step's context (a side effect: the kubelet
	// registering its Node, a cancellation mid-step).
	Do func(ctx context.Context)
}

// Guest is one in-memory guest. Its fields may be set before use.
type Guest struct {
	mu sync.Mutex
	// Steps answers steps by name; an unnamed step succeeds silently, and
	// windows-build reports DefaultBuild.
	Steps map[string]Reply
	// ConnectErrs fail the connections in order, one each (nil: that one
	// succeeds).
	ConnectErrs []error
	// Files are the guest's text files, for Get-Content.
	Files map[string]string

	ran     []string
	scripts []string
	configs []remote.Config
	open    int
	closed  int
}

// New returns a guest whose steps all succeed.
func New() *Guest {
	return &Guest{Steps: map[string]Reply{}, Files: map[string]string{}}
}

// Connect is a guest.Connector for this guest.
func (g *Guest) Connect(ctx context.Context, cfg remote.Config) (remote.Transport, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.configs = append(g.configs, cfg)
	if len(g.ConnectErrs) > 0 {
		err := g.ConnectErrs[0]
		g.ConnectErrs = g.ConnectErrs[1:]
		if err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	g.open++
	return &transport{g: g}, nil
}

// Ran lists the steps run, in order.
func (g *Guest) Ran() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.ran)
}

// Scripts lists every script run, steps and others, in order.
func (g *Guest) Scripts() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.scripts)
}

// Configs lists the settings of every connection attempt.
func (g *Guest) Configs() []remote.Config {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.configs)
}

// Open is the number of transports connected and not closed.
func (g *Guest) Open() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.open - g.closed
}

// StepName is the name a bootstrap script declares on its first line
// ("# step: <name>"), "" for another script.
func StepName(script string) string {
	first, _, _ := strings.Cut(script, "\n")
	name, ok := strings.CutPrefix(first, "# step: ")
	if !ok {
		return ""
	}
	return strings.TrimSpace(name)
}

type transport struct {
	g      *Guest
	closed bool
}

func (t *transport) Run(ctx context.Context, script string) (remote.Result, error) {
	g := t.g
	g.mu.Lock()
	if t.closed {
		g.mu.Unlock()
		return remote.Result{}, errors.New("guesttest: transport closed")
	}
	g.scripts = append(g.scripts, script)
	name := StepName(script)
	if name == "" {
		defer g.mu.Unlock()
		return g.other(script)
	}
	g.ran = append(g.ran, name)
	reply, ok := g.Steps[name]
	g.mu.Unlock()
	if !ok && name == "windows-build" {
		reply.Stdout = "WINDOWS-BUILD=" + DefaultBuild + "\r\n"
	}
	if reply.Do != nil {
		reply.Do(ctx)
	}
	if reply.Hang {
		<-ctx.Done()
		return remote.Result{}, ctx.Err()
	}
	if err := ctx.Err(); err != nil {
		return remote.Result{}, err
	}
	if reply.Err != nil {
		return remote.Result{}, reply.Err
	}
	res := remote.Result{Stdout: reply.Stdout, Stderr: reply.Stderr, ExitCode: reply.ExitCode}
	if reply.ExitCode != 0 {
		return res, &remote.ExitError{ExitCode: reply.ExitCode, Stdout: reply.Stdout, Stderr: reply.Stderr}
	}
	return res, nil
}

// other answers a script that is not a step: Get-Content of a file.
func (g *Guest) other(script string) (remote.Result, error) {
	if rest, ok := strings.CutPrefix(script, "Get-Content -Path '"); ok {
		p, _, _ := strings.Cut(rest, "'")
		if content, ok := g.Files[p]; ok {
			return remote.Result{Stdout: content}, nil
		}
		return remote.Result{}, &remote.ExitError{ExitCode: 1, Stderr: "Cannot find path '" + p + "' because it does not exist."}
	}
	return remote.Result{}, &remote.ExitError{ExitCode: 1, Stderr: "guesttest: unmodelled script"}
}

// Upload stores the file in Files after checking its SHA-256, as the
// transports' upload does on the host.
func (t *transport) Upload(ctx context.Context, r io.Reader, size int64, sha256hex, dest string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return false, err
	}
	if sum := sha256.Sum256(b); !strings.EqualFold(hex.EncodeToString(sum[:]), sha256hex) || (size >= 0 && int64(len(b)) != size) {
		return false, errors.New("guesttest: upload of " + dest + ": size or SHA-256 mismatch")
	}
	t.g.mu.Lock()
	defer t.g.mu.Unlock()
	if t.g.Files == nil {
		t.g.Files = map[string]string{}
	}
	t.g.Files[dest] = string(b)
	return false, nil
}

func (t *transport) Close() error {
	t.g.mu.Lock()
	defer t.g.mu.Unlock()
	if !t.closed {
		t.closed = true
		t.g.closed++
	}
	return nil
}

// Command sandbox runs the embedded sandbox (govmomi's vCenter simulator with
// Windows Server templates and a real Kubernetes control plane, all on
// 127.0.0.1) in the foreground until interrupted.
//
//	go run ./cmd/sandbox --env-file PATH [--dir DIR] [--no-allocate-node-cidrs] [--runner-outside-subnet] [--cni flannel|calico|antrea] [-- COMMAND ARGS...]
//
// --cni (or SANDBOX_CNI) is the cluster's network plugin on its Linux node:
// flannel (the default), calico (Calico's CRDs and configuration, which
// windows_node_networking's calico mode joins) or antrea (antrea.yml's
// ConfigMap, agent identity and DaemonSet, which its antrea mode joins).
//
// --runner-outside-subnet (or SANDBOX_RUNNER_OUTSIDE_SUBNET=1) puts this
// machine outside the guests' subnet, as a CI runner or Terraform Cloud
// agent is: the guests' WinRM HTTP port refuses it, guest operations work.
//
// Once everything is ready it writes PATH with `export` lines for the
// provider, Terraform and the tests (`source PATH`); on SIGINT or SIGTERM it
// stops every process, removes PATH and removes its temporary state.
//
// With a COMMAND (as `make demo` uses it), it runs COMMAND once ready, with
// the sandbox's variables added to its environment, then tears the sandbox
// down and exits with COMMAND's status.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox"
)

func main() {
	envFile := flag.String("env-file", "", "write the sandbox's environment variables to this `file` once ready (required)")
	dir := flag.String("dir", "", "working `directory` (kept on exit); default: a temporary directory removed on exit")
	noAllocate := flag.Bool("no-allocate-node-cidrs", false, "do not let the controller manager assign pod CIDRs to Nodes")
	outside := flag.Bool("runner-outside-subnet", os.Getenv("SANDBOX_RUNNER_OUTSIDE_SUBNET") == "1",
		"put this machine outside the guests' subnet (a CI runner): their WinRM HTTP port refuses it (default from SANDBOX_RUNNER_OUTSIDE_SUBNET=1)")
	cni := flag.String("cni", os.Getenv("SANDBOX_CNI"), "the cluster's network plugin on its Linux node: flannel (default), calico or antrea (default from SANDBOX_CNI)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(),
			"Usage: go run ./cmd/sandbox --env-file PATH [--dir DIR] [--no-allocate-node-cidrs] [--runner-outside-subnet] [--cni flannel|calico|antrea] [-- COMMAND ARGS...]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *envFile == "" {
		flag.Usage()
		os.Exit(2)
	}
	err := run(*envFile, sandbox.Options{Dir: *dir, AllocateNodeCIDRs: new(!*noAllocate), RunnerOutsideSubnet: *outside, CNI: *cni}, flag.Args())
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && exit.ExitCode() > 0:
		// COMMAND failed and has said why; pass its status on.
		os.Exit(exit.ExitCode())
	default:
		fmt.Fprintln(os.Stderr, err) // already prefixed with the failing part
		os.Exit(1)
	}
}

func run(envFile string, opts sandbox.Options, command []string) (err error) {
	ctx, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stopSignals()

	begin := time.Now()
	logf := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "[%5.1fs] %s\n", time.Since(begin).Seconds(), fmt.Sprintf(format, args...))
	}
	if envFile, err = filepath.Abs(envFile); err != nil {
		return err
	}
	// A file left by a sandbox that was killed points at dead endpoints;
	// nobody must source it while this one starts.
	if err := os.Remove(envFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing stale env file: %w", err)
	}

	logf("starting vSphere (vcsim) and the Kubernetes control plane")
	opts.Logf = logf
	if opts.RunnerOutsideSubnet {
		logf("the runner is outside the guests' subnet: their WinRM HTTP listeners refuse it")
	}
	sb, err := sandbox.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer func() {
		logf("stopping")
		rmErr := os.Remove(envFile)
		if errors.Is(rmErr, os.ErrNotExist) {
			rmErr = nil
		}
		err = errors.Join(err, sb.Stop(), rmErr)
		if err == nil {
			logf("stopped")
		}
	}()
	if err := sb.WriteEnvFile(envFile); err != nil {
		return err
	}
	printSummary(os.Stdout, sb, envFile, len(command) == 0)
	if len(command) > 0 {
		return runCommand(ctx, sb, command)
	}

	select {
	case <-ctx.Done():
		// A second signal now ends the process at once; the kernel then
		// kills the components (they die with their parent).
		stopSignals()
		return nil
	case <-sb.Failed():
		return sb.Err()
	}
}

// runCommand runs command with the sandbox's environment and returns its
// result. A signal, or a failing component, ends it with SIGTERM first.
func runCommand(ctx context.Context, sb *sandbox.Sandbox, command []string) error {
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Env = append(os.Environ(), sb.Environ()...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("running %s: %w", command[0], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var cause error
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		cause = fmt.Errorf("interrupted while %s ran", command[0])
	case <-sb.Failed():
		cause = sb.Err()
	}
	// It may have exited meanwhile.
	_ = cmd.Process.Signal(syscall.SIGTERM)
	<-done //nolint:errcheck // its exit after the signal is not the cause
	return cause
}

func printSummary(w io.Writer, sb *sandbox.Sandbox, envFile string, interactive bool) {
	vc, cp := sb.VSphere, sb.ControlPlane
	fmt.Fprintf(w, "\nSandbox ready in %s.\n\n", sb.ReadyIn.Round(100*time.Millisecond))
	fmt.Fprintf(w, "  vSphere     %s (user %s, the least-privilege roles; administrator %s)\n", vc.URL, vc.ProviderUser, vc.User)
	fmt.Fprintf(w, "  Kubernetes  %s (%s), admin kubeconfig %s (the install-once resources' identity)\n", cp.Server, cp.Version, sb.Kubeconfig)
	fmt.Fprintf(w, "              the provider's everyday (KUBECONFIG): %s, ServiceAccount bound by examples/rbac\n", sb.ProviderKubeconfig)
	fmt.Fprintf(w, "  templates   2019: %s\n              2022: %s\n              2025: %s\n", vc.Templates["2019"], vc.Templates["2022"], vc.Templates["2025"])
	fmt.Fprintf(w, "  placement   resource pool %s, datastore %s, network %s, folder %s\n",
		vc.ResourcePoolID, vc.DatastoreID, vc.NetworkID, vc.Folder)
	fmt.Fprintf(w, "  CA          %s (signs every endpoint)\n", sb.CAFile)
	fmt.Fprintf(w, "  logs        %s\n", cp.LogDir)
	if mem := memorySummary(sb); mem != "" {
		fmt.Fprintf(w, "  memory      %s\n", mem)
	}
	if !interactive {
		fmt.Fprintln(w)
		return
	}
	fmt.Fprintf(w, "\nIn another shell:\n\n  source %s\n  cd examples/quickstart && terraform apply\n\n", envFile)
	fmt.Fprintf(w, "Press Ctrl-C to stop the sandbox; it removes %s and its temporary state.\n", envFile)
}

// memorySummary lists each process's resident memory (Linux only): the
// control-plane components, and this process, which hosts vcsim.
func memorySummary(sb *sandbox.Sandbox) string {
	pids := sb.ControlPlane.PIDs()
	names := make([]string, 0, len(pids))
	for name := range pids {
		names = append(names, name)
	}
	sort.Strings(names)
	var parts []string
	var total int64
	add := func(name string, pid int) {
		if rss, ok := sandbox.ResidentMemory(pid); ok {
			parts = append(parts, fmt.Sprintf("%s %d MiB", name, rss>>20))
			total += rss
		}
	}
	for _, name := range names {
		add(name, pids[name])
	}
	add("vcsim (this process)", os.Getpid())
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("%s; total %d MiB", strings.Join(parts, ", "), total>>20)
}

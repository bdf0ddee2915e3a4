package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/klog/v2"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/latency"
)

// Provider installation, as GNUmakefile's build target lays it out.
const (
	providerNamespace = "wincluster"
	providerVersion   = "0.1.0"
)

// sandboxStartTimeout covers a first run that still builds the control plane.
const sandboxStartTimeout = 30 * time.Minute

// world is what every benchmark shares: one sandbox, the provider binary and
// the provider's own Kubernetes identity. It is made on first use, so a
// `go test` run without -bench starts nothing.
//
// It starts its own sandbox rather than sandboxtest.Shared's: the sandbox
// lives in the run's directory beside the provider build and the Terraform
// working directories, logs to a file there rather than the test output,
// starts while the provider builds, and is kept with its logs after a
// failed run (BENCH_KEEP); a missing Terraform CLI skips before anything
// starts.
type world struct {
	dir     string // everything of this run: sandbox, plugins, logs
	logFile string // the sandbox's progress log
	sb      *sandbox.Sandbox
	tf      string // the Terraform CLI
	plugins string // -plugin-dir
	kube    *kubeCounter
	// env is the environment of every terraform command.
	env []string
	// model is the sandbox's latency model (nil: it answers at once).
	model *latency.Model
	// base is the scaled benchmarks' golden image and networking, once
	// applied (scaledBase).
	base *base
}

var (
	// worldMu guards the world in use: one sandbox runs at a time, the
	// plain one (the first benchmarks) or one under a latency model (the
	// scaled ones, whose files sort last, so each world starts once).
	worldMu   sync.Mutex
	theWorld  *world
	worldKey  string
	worldErr  error
	worldSkip string
)

// getWorld returns the shared world of the plain sandbox (no latency
// model), starting it on first use; it skips the benchmark when the
// Terraform CLI is missing.
func getWorld(b *testing.B) *world { return getWorldOf(b, nil) }

// getWorldOf returns the world whose sandbox plays model (nil: none),
// stopping the world of another model first.
func getWorldOf(b *testing.B, model *latency.Model) *world {
	b.Helper()
	worldMu.Lock()
	defer worldMu.Unlock()
	key := "plain"
	if model.On() {
		key = fmt.Sprintf("factor %g, quantile %d", model.Factor, model.Quantile)
	}
	if worldSkip == "" && key != worldKey {
		if theWorld != nil {
			stopWorld(false)
		}
		worldKey, theWorld, worldErr = key, nil, nil
		tf, err := terraformPath()
		if err != nil {
			worldSkip = err.Error()
		} else {
			theWorld, worldErr = startWorld(tf, model)
		}
	}
	if worldSkip != "" {
		b.Skip(worldSkip)
	}
	if worldErr != nil {
		b.Fatal(worldErr)
	}
	if err := theWorld.sb.Err(); err != nil {
		b.Fatalf("the sandbox failed: %v (log: %s)", err, theWorld.logFile)
	}
	return theWorld
}

// stopWorld stops the sandbox and removes the run's directory, unless
// keep (a failed run: its logs are the evidence).
func stopWorld(keep bool) {
	if theWorld == nil {
		return
	}
	if theWorld.sb != nil {
		if err := theWorld.sb.Stop(); err != nil {
			log.Printf("bench: stopping the sandbox: %v", err)
		}
	}
	if keep {
		log.Printf("bench: kept %s (sandbox log %s)", theWorld.dir, theWorld.logFile)
		return
	}
	_ = os.RemoveAll(theWorld.dir)
}

// terraformPath is TF_ACC_TERRAFORM_PATH, else terraform or tofu on PATH.
func terraformPath() (string, error) {
	if p := os.Getenv("TF_ACC_TERRAFORM_PATH"); p != "" {
		return p, nil
	}
	for _, name := range []string{"terraform", "tofu"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no Terraform CLI: set TF_ACC_TERRAFORM_PATH or put terraform (or tofu) on PATH (make terraform-cli)")
}

func startWorld(tf string, model *latency.Model) (_ *world, err error) {
	w := &world{tf: tf, model: model}
	if w.dir, err = os.MkdirTemp("", "windows-bench-"); err != nil {
		return nil, err
	}
	theWorld = w // stopWorld cleans up whatever exists, also after a failure
	w.logFile = filepath.Join(w.dir, "sandbox.log")
	lf, err := os.Create(w.logFile)
	if err != nil {
		return nil, err
	}
	logger := log.New(lf, "", log.Lmicroseconds)

	// The provider builds while the sandbox starts.
	built := make(chan error, 1)
	go func() { built <- w.buildProvider() }()

	ctx, cancel := context.WithTimeout(context.Background(), sandboxStartTimeout)
	defer cancel()
	log.Printf("bench: starting the sandbox (latency model: %s; log: %s)", describeModel(model), w.logFile)
	if w.sb, err = sandbox.Start(ctx, sandbox.Options{Dir: filepath.Join(w.dir, "sandbox"), Latency: model, Logf: logger.Printf}); err != nil {
		<-built //nolint:errcheck // the sandbox's failure is the one to report
		return nil, fmt.Errorf("starting the sandbox: %w (log: %s)", err, w.logFile)
	}
	log.Printf("bench: sandbox ready in %s", w.sb.ReadyIn.Round(time.Millisecond))
	if err := <-built; err != nil {
		return nil, err
	}
	if w.kube, err = newKubeCounter(ctx, w.sb, w.dir); err != nil {
		return nil, err
	}
	w.env = w.environ()
	return w, nil
}

// buildProvider builds the provider binary into a -plugin-dir layout, for
// both registries (terraform and tofu), as `make build` does; with
// BENCH_PROVIDER_BINARY it installs that binary instead.
func (w *world) buildProvider() error {
	w.plugins = filepath.Join(w.dir, "plugins")
	binary := "terraform-provider-windows_v" + providerVersion
	osArch := runtime.GOOS + "_" + runtime.GOARCH
	var first string
	for _, host := range []string{"registry.terraform.io", "registry.opentofu.org"} {
		dir := filepath.Join(w.plugins, host, providerNamespace, "windows", providerVersion, osArch)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		dst := filepath.Join(dir, binary)
		if first != "" {
			if err := os.Link(first, dst); err != nil {
				return err
			}
			continue
		}
		if bin := os.Getenv("BENCH_PROVIDER_BINARY"); bin != "" {
			// A given build (a release, an experiment) instead of this tree.
			data, err := os.ReadFile(bin)
			if err != nil {
				return err
			}
			if err := os.WriteFile(dst, data, 0o755); err != nil {
				return err
			}
			log.Printf("bench: provider %s", bin)
			first = dst
			continue
		}
		built, err := buildOnce()
		if err != nil {
			return err
		}
		if err := os.Link(built, dst); err != nil {
			return err
		}
		first = dst
	}
	return nil
}

var (
	buildMu  sync.Mutex
	buildDir string // the provider built once per run, for every world
	buildErr error
)

// buildOnce builds this tree's provider once per run (every world, plain or
// under a latency model, installs the same binary) into a directory that
// TestMain removes.
func buildOnce() (string, error) {
	buildMu.Lock()
	defer buildMu.Unlock()
	if buildDir != "" || buildErr != nil {
		return filepath.Join(buildDir, "terraform-provider-windows"), buildErr
	}
	dir, err := os.MkdirTemp("", "windows-bench-provider-")
	if err != nil {
		buildErr = err
		return "", err
	}
	buildDir = dir
	bin := filepath.Join(dir, "terraform-provider-windows")
	start := time.Now()
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.version="+providerVersion,
		"-o", bin, "github.com/wincluster/terraform-provider-windows")
	if out, err := cmd.CombinedOutput(); err != nil {
		buildErr = fmt.Errorf("building the provider: %v\n%s", err, out)
		return "", buildErr
	}
	log.Printf("bench: provider built in %s", time.Since(start).Round(time.Millisecond))
	return bin, nil
}

// environ is the environment of terraform: this process's, minus settings
// that would change what is measured, plus the sandbox's, with the
// provider's own Kubernetes identity.
func (w *world) environ() []string {
	drop := map[string]bool{
		"TF_LOG": true, "TF_LOG_CORE": true, "TF_LOG_PROVIDER": true, "TF_LOG_PATH": true,
		"KUBECONFIG": true, "KUBE_CONFIG_PATH": true, "KUBE_CONFIG_PATHS": true, "KUBE_CTX": true,
		"KUBE_HOST": true, "KUBE_TOKEN": true, "TF_REATTACH_PROVIDERS": true, "TF_PLUGIN_CACHE_DIR": true,
	}
	// A CLI configuration file that does not exist makes OpenTofu warn on
	// every command; nothing here needs one.
	if f := os.Getenv("TF_CLI_CONFIG_FILE"); f != "" {
		if _, err := os.Stat(f); err != nil {
			drop["TF_CLI_CONFIG_FILE"] = true
		}
	}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !drop[name] && !strings.HasPrefix(name, "VSPHERE_") && !strings.HasPrefix(name, "TF_VAR_") {
			env = append(env, kv)
		}
	}
	for _, e := range w.sb.Env() {
		if e.Name != "KUBECONFIG" {
			env = append(env, e.Name+"="+e.Value)
		}
	}
	return append(env,
		"KUBE_CONFIG_PATH="+w.kube.kubeconfig,
		"CHECKPOINT_DISABLE=1",
		"TF_IN_AUTOMATION=1",
	)
}

func TestMain(m *testing.M) {
	// client-go in this process (readyWatch, the sandbox's simulated
	// kubelets) logs to stderr when its requests are cut short.
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
	onePerRun()
	code := m.Run()
	// BENCH_KEEP=1 keeps the run's directory (Terraform working
	// directories, provider logs, the sandbox) to look into.
	worldMu.Lock()
	stopWorld(code != 0 || os.Getenv("BENCH_KEEP") != "")
	worldMu.Unlock()
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// onePerRun makes -benchtime 1x the default here: each benchmark's op is
// one Terraform command against a world it first builds (minutes), and an
// op shorter than the default 1s benchtime (a pool's refresh can be) would
// make the testing package run the whole benchmark again with b.N = 2, its
// setup included. `make bench` runs every package with the default; an
// explicit -benchtime still wins.
func onePerRun() {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.benchtime" })
	if !set {
		if err := flag.Set("test.benchtime", "1x"); err != nil {
			log.Printf("bench: -benchtime 1x: %v", err)
		}
	}
}

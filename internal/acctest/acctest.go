// Package acctest runs acceptance tests against the sandbox: one sandbox per
// test package (started by Main from TestMain), the provider served in-process
// to the real Terraform CLI, and API clients for checks that read the real
// vCenter simulator and control plane.
package acctest

import (
	"context"
	"fmt"
	"log"
	"maps"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/latency"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/sandboxtest"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// ProviderFactories serves the provider under test to the Terraform CLI:
// one server per configuration of it, as Terraform runs one process per
// configuration (identityServer).
var ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"windows": newIdentityServer,
}

// Sandbox is the running sandbox; nil unless TF_ACC is set, and nil in lab
// mode (TF_ACC_LAB=1), where tests that need it skip (RequireSandbox).
var Sandbox *sandbox.Sandbox

// Main starts the sandbox when acceptance tests are enabled (TF_ACC), exports
// its settings into the environment the provider reads, runs the tests and
// stops the sandbox; in lab mode (TF_ACC_LAB=1, lab.go) it starts none and
// reads the lab from the environment. The sandbox is the package's shared one
// (sandboxtest.Shared returns it too), started before any test. Started by
// ApplyInPluginProcess, the binary serves the provider instead.
func Main(m *testing.M) {
	if os.Getenv(pluginProcessEnv) != "" {
		os.Exit(servePluginProcess())
	}
	if os.Getenv("TF_ACC") == "" {
		os.Exit(m.Run())
	}
	if LabMode() {
		os.Exit(runInLab(m))
	}
	os.Exit(runWithSandbox(m))
}

func runWithSandbox(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), sandboxtest.StartTimeout)
	defer cancel()
	start := time.Now()
	// The sandbox's own log (a control-plane component restarted, the Linux
	// node's status sync failing) goes straight to stderr: resource.Test
	// points the log package at its own logging, which drops it, and a
	// failed run needs it as evidence. go test shows it only for a package
	// that failed.
	sandboxLog := log.New(os.Stderr, "", log.LstdFlags)
	// SANDBOX_LATENCY_FACTOR (and _QUANTILE) play real durations, scaled
	// (internal/sandbox/latency): off unless set.
	model, err := latency.FromEnv()
	if err != nil {
		log.Print(err)
		return 1
	}
	if model.On() {
		log.Printf("sandbox latency model on: real durations divided by %g, quantile %d (0 median, 1 p99)", model.Factor, model.Quantile)
	}
	sb, err := sandboxtest.StartShared(ctx, sandbox.Options{Logf: sandboxLog.Printf, Latency: model})
	if err != nil {
		log.Printf("starting the sandbox: %v", err)
		return 1
	}
	defer func() {
		if err := sandboxtest.Stop(); err != nil {
			log.Printf("stopping the sandbox: %v", err)
		}
	}()
	log.Printf("sandbox ready in %s (%s)", time.Since(start).Round(time.Millisecond), sb.Dir)
	for _, e := range sb.Env() {
		if err := os.Setenv(e.Name, e.Value); err != nil {
			log.Printf("exporting %s: %v", e.Name, err)
			return 1
		}
	}
	Sandbox = sb
	ran := make(chan struct{})
	go exitWhenSandboxFails(sb, ran)
	code := m.Run()
	close(ran)
	if code == 0 {
		// Every vSphere method the provider called has its privileges
		// documented (the guide's vSphere role is generated from them).
		// To stderr: resource.Test points the log package at its own
		// logging, which drops it.
		calls := sb.VSphere.CallsBy(vsphere.UserAgent)
		if err := vsphere.CheckPrivileges(calls); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
			return 1
		}
		// And every method a resource called lists that resource (the
		// guide's per-resource privileges): the provider tags each
		// operation's calls with an operationID naming its resource.
		byResource, err := vsphere.CheckResourcePrivileges(sb.VSphere.CallsByOperation(vsphere.UserAgent))
		if err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
			return 1
		}
		var n int64
		for _, c := range calls {
			n += c
		}
		fmt.Fprintf(os.Stderr, "vSphere: the provider called %d methods (%d calls), each with its privileges documented: %s\n",
			len(calls), n, strings.Join(slices.Sorted(maps.Keys(calls)), " "))
		for _, r := range slices.Sorted(maps.Keys(byResource)) {
			fmt.Fprintf(os.Stderr, "vSphere: %s called %d methods, each listing it: %s\n", r, len(byResource[r]), strings.Join(byResource[r], " "))
		}
	}
	return code
}

// exitWhenSandboxFails ends the test binary as soon as a part of the
// sandbox no kubelet would restart (etcd, the API server) exits on its own:
// every test still running would wait on a cluster that is gone until its
// timeouts, and the run would end an hour later on the package's timeout
// with no word of the cause. The cause goes to stderr, with the component's
// last log lines, and the sandbox's processes are stopped first.
func exitWhenSandboxFails(sb *sandbox.Sandbox, ran <-chan struct{}) {
	select {
	case <-sb.Failed():
	case <-ran:
		return
	}
	fmt.Fprintf(os.Stderr, "FAIL: the sandbox failed while tests ran; every test still running needs it, so the run ends here:\n%v\n", sb.Err())
	if err := sandboxtest.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping the sandbox: %v\n", err)
	}
	os.Exit(1)
}

// CheckUserAgent is the user agent of the tests' own vSphere clients, whose
// calls are not the provider's (vcsim counts them apart).
const CheckUserAgent = "terraform-provider-windows-acctest"

// PreCheck skips an acceptance test unless TF_ACC is set (as resource.Test
// does), and then requires the sandbox to be up, or lab mode.
func PreCheck(t *testing.T) {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1 (make testacc)")
	}
	if LabMode() && sandboxOnly != "" {
		t.Skipf("the package's tests need the in-process sandbox (%s): skipped in lab mode (%s=1)", sandboxOnly, LabEnv)
	}
	if Sandbox == nil && !LabMode() {
		t.Fatal("the sandbox is not running: call acctest.Main from TestMain")
	}
}

// Kube is an admin client of the sandbox cluster (in lab mode, of
// SANDBOX_ADMIN_KUBECONFIG's), for checks and for changing objects behind
// Terraform's back.
func Kube(t *testing.T) *kube.Client {
	t.Helper()
	PreCheck(t)
	c, err := kube.NewClient(context.Background(), kube.Config{ConfigPaths: []string{adminKubeconfig()}})
	if err != nil {
		t.Fatalf("connecting to the sandbox cluster: %v", err)
	}
	return c
}

// Name returns a name unique to the test, safe as a Kubernetes object name:
// prefix, a dash and nine digits.
func Name(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()%1_000_000_000)
}

var seq atomic.Int64

// Seq returns a number unique in the test binary, for short names (a
// Windows computer name has at most 15 characters).
func Seq() int64 { return seq.Add(1)*1000 + time.Now().UnixNano()%1000 }

package leakcheck_test

import (
	"context"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
)

// TestAccApply20Nodes applies a golden image and 20 nodes at once (make
// race-apply runs such an apply with the provider built with the race
// detector), destroys them, and then checks that no goroutine of the provider is left: every watch, property
// collector wait, WinRM connection and worker that the run started has
// ended with it.
func TestAccApply20Nodes(t *testing.T) {
	acctest.PreCheck(t)
	image := acctest.Name("race")
	nodes := make([]string, 20)
	for i := range nodes {
		nodes[i] = acctest.NodeName("rc")
	}
	config := acctest.NodeConfig(image, nodes, "")
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNodesDestroyed(t),
		Steps: []resource.TestStep{{
			Config: config,
			Check:  acctest.CheckNodesReady(t, nodes...),
		}},
	})
	// The provider served Terraform in this process (ProtoV6ProviderFactories):
	// after the destroy its goroutines must all have ended. They end on
	// their own schedule (a connection's reader sees its close), so the
	// check waits for them, within a bound.
	var left []string
	err := acctest.Eventually(2*time.Minute, "the provider's goroutines to end", func(context.Context) (bool, error) {
		left = providerGoroutines()
		return len(left) == 0, nil
	})
	if err != nil {
		t.Fatalf("%d goroutines of the provider are left after its run:\n\n%s", len(left), strings.Join(left, "\n\n"))
	}
}

// providerFrame is a stack frame in the provider's own packages: those a
// provider run starts goroutines from (its clients' watches and property
// collector waits, its connections to guests, its workers). The sandbox
// runs in this process too (vcsim, the simulated hosts, kubelets and the
// control plane's clients), and so does the test framework; their
// goroutines live as long as the sandbox and are not the provider's.
var providerFrame = regexp.MustCompile(`terraform-provider-windows/internal/(provider|resources|clients|winpool|winnode|goldenimage|guest|bootstrap|remote|vsphere|kube|redact)\.`)

var (
	goroutineHeader = regexp.MustCompile(`^goroutine (\d+) `)
	createdBy       = regexp.MustCompile(`(?m)^created by .* in goroutine (\d+)$`)
)

// providerGoroutines returns the stacks of the goroutines that belong to the
// provider: those with a frame in its packages, and those created by one
// of them that is still running (a client-go reflector's or govmomi's
// goroutines have only library frames, but the provider's goroutine that
// started them is their creator). A goroutine whose creator has ended is
// judged by its own frames; the standard library's connection goroutines
// (net/http's persistConn loops) are the transport's idle connections,
// which the clients close when the run ends and which end then.
func providerGoroutines() []string {
	buf := make([]byte, 64<<20)
	buf = buf[:runtime.Stack(buf, true)]
	type g struct {
		stack, parent string
	}
	all := map[string]g{}
	for _, s := range strings.Split(string(buf), "\n\n") {
		m := goroutineHeader.FindStringSubmatch(s)
		if m == nil {
			continue
		}
		var parent string
		if c := createdBy.FindStringSubmatch(s); c != nil {
			parent = c[1]
		}
		all[m[1]] = g{stack: s, parent: parent}
	}
	var own func(id string, depth int) bool
	own = func(id string, depth int) bool {
		x, ok := all[id]
		if !ok || depth > 64 {
			return false
		}
		return providerFrame.MatchString(x.stack) || own(x.parent, depth+1)
	}
	var out []string
	for id, x := range all {
		if own(id, 0) {
			out = append(out, x.stack)
		}
	}
	return out
}

// TestProviderGoroutinesFindsAWatch: the check sees a provider goroutine
// that is still running (a Node watch on the sandbox's API server, through
// client-go's goroutines too), and no longer once it has ended.
func TestProviderGoroutinesFindsAWatch(t *testing.T) {
	c := acctest.Kube(t)
	before := len(providerGoroutines())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = c.WaitForNodeReady(ctx, "never")
	}()
	if err := acctest.Eventually(time.Minute, "the watch's goroutine to be found", func(context.Context) (bool, error) {
		return len(providerGoroutines()) > before, nil
	}); err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done
	if err := acctest.Eventually(time.Minute, "the watch's goroutines to end", func(context.Context) (bool, error) {
		return len(providerGoroutines()) == before, nil
	}); err != nil {
		t.Fatalf("%v:\n%s", err, strings.Join(providerGoroutines(), "\n\n"))
	}
}

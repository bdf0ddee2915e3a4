package bench

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// BenchmarkRefresh100Nodes creates a golden image and 100 nodes (one apply
// at -parallelism=10, not timed), then times `terraform plan -refresh-only`
// (the op) and a full `terraform plan`, both at -parallelism=20, counting
// the round trips each makes at the servers. The metrics are those of the refresh-only plan:
//
//	vsphere-rt/node   SOAP requests / 100, everything included (login, the
//	                  image's read)
//	kube-req/node     the provider's Kubernetes requests / 100, likewise
//	plan-s            wall time of the full plan, with its own
//	                  plan-vsphere-rt/node and plan-kube-req/node
//
// The target is at most 2 vSphere round trips and 1 Kubernetes request per
// node, plus the run's own (the nodes' health: one EndpointSlice list and
// one pod list per networking); the report splits each count into per-node
// and per-run requests.
func BenchmarkRefresh100Nodes(b *testing.B) {
	// The setup creates 10 nodes at a time: at 20 on this 2-core machine the
	// simulated kubelets' start (each runs the kubelet's own flag checks as
	// a process) overran the sandbox's 2 s service start timeout ("Cannot
	// start service kubelet", 3 of 100 nodes).
	const nodes, setupParallelism, parallelism = 100, 10, 20
	w := getWorld(b)
	b.StopTimer()

	dir := w.workdir(b, "refresh", w.config("bench-refresh", "rf", nodes, skipCIDRCheck))
	// A node the sandbox failed (sandboxFailed) is tainted; the next apply
	// replaces it.
	var apply tfRun
	var err error
	for attempt := 1; attempt <= 3; attempt++ {
		apply, err = w.terraform(b.Context(), dir, fmt.Sprintf("apply%d", attempt), nil,
			"apply", "-auto-approve", "-input=false", "-no-color", "-json", fmt.Sprintf("-parallelism=%d", setupParallelism))
		if !sandboxFailed(err) {
			break
		}
		report(b, "setup apply %d: a simulated kubelet missed its 2 s service start; apply again", attempt)
	}
	b.Cleanup(func() {
		run, err := w.terraform(context.Background(), dir, "destroy", nil,
			"destroy", "-auto-approve", "-input=false", "-no-color", "-json", fmt.Sprintf("-parallelism=%d", parallelism))
		if err != nil {
			b.Error(err)
			return
		}
		report(b, "destroy of %d nodes and the image at -parallelism=%d: %s", nodes, parallelism, run.Wall.Round(time.Millisecond))
	})
	if err != nil {
		b.Fatal(err)
	}
	report(b, "setup: apply of the image and %d nodes at -parallelism=%d: %s", nodes, setupParallelism, apply.Wall.Round(time.Millisecond))

	plan := func(name string, timed bool, args ...string) (tfRun, map[string]int64, kubeCount) {
		b.Helper()
		vc, kc := w.sb.VSphere.Calls(), mustCount(b, w)
		if timed {
			b.StartTimer()
		}
		run, err := w.terraform(b.Context(), dir, name, nil, append([]string{"plan", "-input=false", "-no-color", "-json", "-detailed-exitcode",
			fmt.Sprintf("-parallelism=%d", parallelism)}, args...)...)
		if timed {
			b.StopTimer()
		}
		if err != nil {
			b.Fatal(err)
		}
		// Right after the apply nothing should drift and nothing may change.
		// A refresh-only plan's exit code says nothing here: Terraform 1.11
		// exits 2 when the refreshed state differs from the stored one in
		// any way, and it lists sensitive_attributes (the write-only paths)
		// in a different order on every refresh; its events do say. Drift
		// (a computed attribute the create stored before it settled) is
		// reported; a planned change fails the benchmark.
		drift, changes := planEvents(run.Output)
		if len(drift) > 0 {
			report(b, "WARNING: terraform %s right after the apply finds drift in %d resources: %s",
				name, len(drift), strings.Join(drift, ", "))
		}
		if len(changes) > 0 || run.ExitCode == 2 && !containsArg(args, "-refresh-only") {
			b.Errorf("terraform %s right after the apply plans changes (exit code %d): %s", name, run.ExitCode, strings.Join(changes, "; "))
		}
		calls, _ := diffCalls(vc, w.sb.VSphere.Calls())
		return run, calls, mustCount(b, w).sub(kc)
	}

	for range b.N {
		refresh, vc, kc := plan("plan-refresh-only", true, "-refresh-only")
		full, pvc, pkc := plan("plan", false)

		for _, r := range []struct {
			name string
			run  tfRun
			vc   map[string]int64
			kc   kubeCount
		}{{"plan -refresh-only", refresh, vc, kc}, {"plan", full, pvc, pkc}} {
			var vcTotal int64
			for _, n := range r.vc {
				vcTotal += n
			}
			report(b, "terraform %s of %d nodes: %s wall", r.name, nodes, r.run.Wall.Round(time.Millisecond))
			report(b, "  vSphere: %d SOAP requests = %.2f per node (%d RetrievePropertiesEx); by method: %s",
				vcTotal, float64(vcTotal)/nodes, r.vc["RetrievePropertiesEx"], formatCalls(r.vc))
			report(b, "  Kubernetes: %g requests of the provider = %.2f per node (%g GET nodes); by kind: %s",
				r.kc.providerTotal(), r.kc.providerTotal()/nodes, r.kc.Provider[flowGetNodes], r.kc.providerByFlow())
		}
		b.ReportMetric(float64(sumCalls(vc))/nodes, "vsphere-rt/node")
		b.ReportMetric(kc.providerTotal()/nodes, "kube-req/node")
		b.ReportMetric(full.Wall.Seconds(), "plan-s")
		b.ReportMetric(float64(sumCalls(pvc))/nodes, "plan-vsphere-rt/node")
		b.ReportMetric(pkc.providerTotal()/nodes, "plan-kube-req/node")
	}
}

func sumCalls(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// planEvents returns the resources with drift and the planned changes of
// -json plan output.
func planEvents(out []byte) (drift, changes []string) {
	for _, line := range splitLines(out) {
		e, ok := parseEvent(line)
		switch {
		case !ok:
		case e.Type == "resource_drift":
			drift = append(drift, e.Change.Resource.Addr)
		case e.Type == "planned_change":
			changes = append(changes, e.Message)
		}
	}
	return drift, changes
}

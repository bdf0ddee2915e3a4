package bench

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// vSphere methods of the provider's session rather than of any read: what
// every Terraform command that configures the provider pays once.
var sessionMethods = map[string]bool{
	"RetrieveServiceContent": true, "Login": true, "Logout": true, "SessionIsActive": true, "CurrentTime": true,
}

// BenchmarkRefreshPool100 makes a windows_node_pool of 100 members (the
// golden image and the networking in a configuration of their own, so the
// pool's refresh is counted alone; max_parallel 10; not timed), then times
// `terraform plan -refresh-only` of the pool's configuration (the op) and
// runs a full `terraform plan`, counting every request each makes at the
// servers and sampling the peak resident set of the provider processes
// Terraform starts. The metrics, per run (the targets are per run,
// whatever the pool's size):
//
//	vsphere-rt       SOAP requests of the refresh-only plan, everything
//	                 included (the provider's login; target <= 3)
//	kube-req         the provider's Kubernetes requests of it (target <= 5:
//	                 the Windows Nodes and the members' health, the
//	                 networking's DaemonSets, its agents' pods and kube-dns's
//	                 EndpointSlices; BenchmarkRefreshPoolHealth100 in
//	                 internal/winnode counts the pool's refresh alone)
//	provider-rss-MiB the largest VmHWM (the kernel's peak resident set) of
//	                 a provider process during the refresh-only plan,
//	                 sampled from /proc/<pid>/status every 20 ms (target
//	                 <= 150)
//	plan-s           wall time of the full plan, with plan-vsphere-rt,
//	                 plan-kube-req and plan-provider-rss-MiB
//	image-vsphere-rt the refresh-only plan of the image's configuration
//	                 (the golden image and the networking), apart; with
//	                 image-kube-req
//	status-vsphere-rt a plan of a configuration holding only a
//	                 windows_update_status data source over the pool's 100
//	                 members against their image (and a check block that
//	                 every member is current): its SOAP requests,
//	                 everything included (target <= 10, whatever the number
//	                 of nodes: the data source reads the VMs with one
//	                 container view); with status-kube-req (target <= 2:
//	                 the Windows Nodes, one list). The benchmark fails above
//	                 either target, or when the check block fails.
//
// The report splits the vSphere requests into the session's (login,
// logout) and the reads.
func BenchmarkRefreshPool100(b *testing.B) {
	// max_parallel stays at its default, 10: at 20 on this 2-core machine
	// the simulated kubelets' start (each runs the kubelet's own flag
	// checks as a process) overran the sandbox's 2 s service start timeout.
	const members, maxParallel = 100, 10
	w := getWorld(b)
	b.StopTimer()
	b.ResetTimer()
	bs := w.applyBase(b, "rp-base", "bench-rp")
	dir := w.workdir(b, "refresh-pool", w.poolConfig("rp", members, bs.templates[0], bs.networkingID, skipCIDRCheck))
	start := time.Now()
	b.Cleanup(func() {
		run, err := w.terraform(context.Background(), dir, "destroy", nil, "destroy", "-auto-approve", "-input=false", "-no-color", "-json")
		if err != nil {
			b.Error(err)
			return
		}
		report(b, "destroy of the pool of %d: %s", members, run.Wall.Round(time.Millisecond))
	})
	apply := w.applyPoolSetup(b, dir)
	statusDir := w.workdir(b, "update-status", w.header()+fmt.Sprintf(`
data "windows_update_status" "pool" {
  image       = %q
  name_prefix = "rp"
}

check "pool_current" {
  assert {
    condition     = length(data.windows_update_status.pool.nodes) == %d && length([for n in data.windows_update_status.pool.nodes : n if n.status != "current"]) == 0
    error_message = "update status: ${jsonencode(data.windows_update_status.pool.nodes)}"
  }
}
`, bs.templates[0], members))
	report(b, "setup: the golden image and the networking %s; the pool of %d (max_parallel %d) %s",
		bs.apply.Wall.Round(time.Millisecond), members, maxParallel, apply.Wall.Round(time.Millisecond))

	type counted struct {
		run  tfRun
		vc   map[string]int64
		kc   kubeCount
		rss  []float64
		name string
		what string
	}
	plan := func(dir, what, name string, timed bool, args ...string) counted {
		b.Helper()
		vc, kc := w.sb.VSphere.Calls(), mustCount(b, w)
		rss := w.sampleProviderRSS(20 * time.Millisecond)
		if timed {
			b.StartTimer()
		}
		run, err := w.terraform(b.Context(), dir, name, nil, append([]string{"plan", "-input=false", "-no-color", "-json", "-detailed-exitcode"}, args...)...)
		if timed {
			b.StopTimer()
		}
		peaks := rss.finish()
		if err != nil {
			b.Fatal(err)
		}
		// Right after the apply nothing should drift and nothing may change
		// (see BenchmarkRefresh100Nodes for the exit code of -refresh-only).
		drift, changes := planEvents(run.Output)
		if len(drift) > 0 {
			report(b, "WARNING: terraform %s right after the apply finds drift in %s", name, strings.Join(drift, ", "))
		}
		if len(changes) > 0 || run.ExitCode == 2 && !containsArg(args, "-refresh-only") {
			b.Errorf("terraform %s right after the apply plans changes (exit code %d): %s", name, run.ExitCode, strings.Join(changes, "; "))
		}
		calls, _ := diffCalls(vc, w.sb.VSphere.Calls())
		return counted{run: run, vc: calls, kc: mustCount(b, w).sub(kc), rss: peaks, name: name, what: what}
	}

	for range b.N {
		pool := fmt.Sprintf("the pool of %d", members)
		refresh := plan(dir, pool, "plan-refresh-only", true, "-refresh-only")
		full := plan(dir, pool, "plan", false)
		image := plan(bs.dir, "the image's configuration (golden image, networking)", "plan-refresh-only", false, "-refresh-only")
		status := plan(statusDir, "windows_update_status over the pool", "plan", false)
		if bytes.Contains(status.run.Output, []byte("Check block assertion failed")) {
			b.Errorf("windows_update_status does not find the %d members current against their image:\n%s", members, status.run.Output)
		}
		// Targets independent of the pool's size (see the comment above).
		if n := sumCalls(status.vc); n > 10 {
			b.Errorf("windows_update_status over %d members made %d vSphere requests, want <= 10: %s", members, n, formatCalls(status.vc))
		}
		if n := status.kc.providerTotal(); n > 2 {
			b.Errorf("windows_update_status over %d members made %g Kubernetes requests, want <= 2: %s", members, n, status.kc.providerByFlow())
		}

		for _, r := range []counted{refresh, full, image, status} {
			session := map[string]int64{}
			reads := map[string]int64{}
			for m, n := range r.vc {
				if sessionMethods[m] {
					session[m] = n
				} else {
					reads[m] = n
				}
			}
			report(b, "terraform %s of %s: %s wall; provider processes' peak RSS (VmHWM) %s MiB", r.name, r.what,
				r.run.Wall.Round(time.Millisecond), formatMiB(r.rss))
			report(b, "  vSphere: %d SOAP requests: session %d (%s), reads %d (%s)",
				sumCalls(r.vc), sumCalls(session), formatCalls(session), sumCalls(reads), formatCalls(reads))
			report(b, "  Kubernetes: %g requests of the provider: %s", r.kc.providerTotal(), r.kc.providerByFlow())
		}
		b.ReportMetric(float64(sumCalls(refresh.vc)), "vsphere-rt")
		b.ReportMetric(refresh.kc.providerTotal(), "kube-req")
		b.ReportMetric(maxOf(refresh.rss), "provider-rss-MiB")
		b.ReportMetric(full.run.Wall.Seconds(), "plan-s")
		b.ReportMetric(float64(sumCalls(full.vc)), "plan-vsphere-rt")
		b.ReportMetric(full.kc.providerTotal(), "plan-kube-req")
		b.ReportMetric(maxOf(full.rss), "plan-provider-rss-MiB")
		b.ReportMetric(float64(sumCalls(image.vc)), "image-vsphere-rt")
		b.ReportMetric(image.kc.providerTotal(), "image-kube-req")
		b.ReportMetric(float64(sumCalls(status.vc)), "status-vsphere-rt")
		b.ReportMetric(status.kc.providerTotal(), "status-kube-req")
	}
	report(b, "(setup to here: %s)", time.Since(start).Round(time.Second))
}

func formatMiB(peaks []float64) string {
	if len(peaks) == 0 {
		return "(no provider process seen)"
	}
	parts := make([]string, len(peaks))
	for i, p := range peaks {
		parts[i] = fmt.Sprintf("%.1f", p)
	}
	return strings.Join(parts, ", ") + fmt.Sprintf(" (%d processes)", len(peaks))
}

func maxOf(xs []float64) float64 {
	var m float64
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

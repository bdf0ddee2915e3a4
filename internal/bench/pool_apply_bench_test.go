package bench

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkPool50VsCount50 makes 50 Windows nodes twice in the same run,
// from one golden image built beforehand (in a configuration of its own,
// with the networking, not timed; both configurations name its template by
// path): as 50 windows_node with count, then as a windows_node_pool of 50
// members (max_parallel 10, the default), each with `terraform apply
// -parallelism=10` from nothing, each destroyed before the next begins. One
// op is the pool's apply. The metrics:
//
//	count-s                  wall time of the count apply
//	pool-s                   wall time of the pool apply
//	pool/count               pool-s / count-s (the target: <= 0.5)
//	vsphere-rt/member        SOAP requests of the pool apply / 50, everything
//	                         included (the provider's login; target <= 20)
//	vsphere-rt/node          the same of the count apply / 50
//	kube-req/member          the provider's Kubernetes requests of the pool
//	                         apply / 50
//	kube-req/node            the same of the count apply / 50
//	member-create-s          median create of one member (the pool's "create
//	                         member" to "member ready"); node-create-s the
//	                         median windows_node create (apply_start to
//	                         apply_complete)
//
// The report adds both destroys' wall times and the requests by method.
func BenchmarkPool50VsCount50(b *testing.B) {
	const nodes, parallelism = 50, 10
	w := getWorld(b)
	b.StopTimer()
	b.ResetTimer()
	bs := w.applyBase(b, "pvc-base", "bench-pvc")
	report(b, "setup: the golden image and the networking: %s", bs.apply.Wall.Round(time.Millisecond))
	par := fmt.Sprintf("-parallelism=%d", parallelism)

	for i := range b.N {
		destroy := func(dir, what string) {
			run, err := w.terraform(context.WithoutCancel(b.Context()), dir, "destroy", nil,
				"destroy", "-auto-approve", "-input=false", "-no-color", "-json", par)
			if err != nil {
				b.Error(err)
				return
			}
			report(b, "destroy of %s: %s", what, run.Wall.Round(time.Millisecond))
		}

		// An apply from nothing, timed or not; one the sandbox failed (see
		// sandboxFailed) is no measurement: it is destroyed and made again.
		fromNothing := func(dir, what string, timed bool) (tfRun, map[string]int64, kubeCount) {
			for attempt := 1; ; attempt++ {
				if timed {
					b.StartTimer()
				}
				run, vc, kc, err := w.countedApply(b, dir, fmt.Sprintf("apply%d", attempt), par)
				if timed {
					b.StopTimer()
				}
				if err == nil {
					return run, vc, kc
				}
				destroy(dir, what+" after a failed apply")
				if !sandboxFailed(err) || attempt == 3 {
					b.Fatal(err)
				}
				if timed {
					discardAttempt(b, i, "the apply of "+what)
				} else {
					report(b, "the apply of %s failed in the sandbox (a simulated kubelet missed its 2 s service start); destroyed, made again", what)
				}
			}
		}

		// 50 windows_node with count.
		countDir := w.workdir(b, fmt.Sprintf("count%d", i), w.countConfig(fmt.Sprintf("cn%d", i), nodes, bs.templates[0], bs.networkingID, skipCIDRCheck))
		count, countVC, countKube := fromNothing(countDir, "the count nodes", false)
		var nodeSpans []time.Duration
		for _, s := range applySpans(count.Output) {
			if s.Type == "windows_node" {
				nodeSpans = append(nodeSpans, s.Duration())
			}
		}
		countEntries, err := parseProviderLog(count.LogFile)
		if err != nil {
			b.Error(err)
		}
		pc := nodeCreates(countEntries)
		countVCTotal := sumCalls(countVC)
		report(b, "%d windows_node (count) at -parallelism=%d: %s wall; node create (apply_start to apply_complete) %s",
			nodes, parallelism, count.Wall.Round(time.Millisecond), distribution(nodeSpans))
		report(b, "  where a node create spends its time (provider log, %d creates):\n%s", len(pc), stageTable(pc))
		report(b, "  vSphere: %d SOAP requests = %.1f per node: %s", countVCTotal, float64(countVCTotal)/nodes, formatCalls(countVC))
		report(b, "  Kubernetes: %g requests of the provider = %.1f per node: %s",
			countKube.providerTotal(), countKube.providerTotal()/nodes, countKube.providerByFlow())
		destroy(countDir, fmt.Sprintf("%d windows_node (count)", nodes))
		if len(nodeSpans) != nodes {
			b.Fatalf("%d windows_node creates in the apply's events, want %d", len(nodeSpans), nodes)
		}

		// A pool of 50.
		poolDir := w.workdir(b, fmt.Sprintf("pool%d", i), w.poolConfig(fmt.Sprintf("pl%d", i), nodes, bs.templates[0], bs.networkingID, skipCIDRCheck))
		pool, poolVC, poolKube := fromNothing(poolDir, "the pool", true)
		entries, err := parseProviderLog(pool.LogFile)
		if err != nil {
			b.Error(err)
		}
		pl := poolLog(entries, 0)
		memberCreates, memberReadyToDone := memberCreates(pl.Members)
		var poolSpan time.Duration
		for _, s := range applySpans(pool.Output) {
			if s.Type == "windows_node_pool" {
				poolSpan = s.Duration()
			}
		}
		poolVCTotal := sumCalls(poolVC)
		report(b, "windows_node_pool of %d (max_parallel 10): %s wall (the resource's apply_start to apply_complete %s; at most %d creates in flight)",
			nodes, pool.Wall.Round(time.Millisecond), poolSpan.Round(time.Millisecond), pl.MaxCreating)
		report(b, "  member create (create member to member ready): %s", distribution(memberCreates))
		report(b, "  Ready to return, the provider's Result.ReadyToDone: %s", distribution(memberReadyToDone))
		report(b, "  wait for node agents (its last stage): %s", distribution(agentWaits(pl.Members)))
		report(b, "  vSphere: %d SOAP requests = %.1f per member: %s", poolVCTotal, float64(poolVCTotal)/nodes, formatCalls(poolVC))
		report(b, "  Kubernetes: %g requests of the provider = %.1f per member: %s",
			poolKube.providerTotal(), poolKube.providerTotal()/nodes, poolKube.providerByFlow())
		destroy(poolDir, fmt.Sprintf("the pool of %d", nodes))
		if len(memberCreates) != nodes {
			b.Errorf("%d members created in the provider's log, want %d", len(memberCreates), nodes)
		}

		ratio := pool.Wall.Seconds() / count.Wall.Seconds()
		report(b, "pool / count wall time: %.2f (target <= 0.5); vSphere requests per member %.1f (target <= 20), per count node %.1f",
			ratio, float64(poolVCTotal)/nodes, float64(countVCTotal)/nodes)

		b.ReportMetric(count.Wall.Seconds(), "count-s")
		b.ReportMetric(pool.Wall.Seconds(), "pool-s")
		b.ReportMetric(ratio, "pool/count")
		b.ReportMetric(float64(poolVCTotal)/nodes, "vsphere-rt/member")
		b.ReportMetric(float64(countVCTotal)/nodes, "vsphere-rt/node")
		b.ReportMetric(poolKube.providerTotal()/nodes, "kube-req/member")
		b.ReportMetric(countKube.providerTotal()/nodes, "kube-req/node")
		b.ReportMetric(percentile(memberCreates, 50).Seconds(), "member-create-s")
		b.ReportMetric(percentile(nodeSpans, 50).Seconds(), "node-create-s")
	}
}

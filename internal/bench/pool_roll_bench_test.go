package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkRollPool10 makes a windows_node_pool of 10 members from one
// golden image, with max_surge = 2 and max_unavailable = 0 (two images and
// the networking in a configuration of their own; not timed), then points
// the pool at the other image and times the `terraform apply` that rolls
// every member (the op). A watch of the Nodes labelled
// windows.wincluster.io/node-pool=<prefix> follows the roll at every change:
// the benchmark fails if fewer than 10 of them are Ready and schedulable at
// any moment. The metrics:
//
//	s/member           the roll's wall time / 10
//	min-ready          the fewest Ready, schedulable pool Nodes seen
//	max-nodes          the most pool Nodes seen (at most 12 with max_surge 2)
//	max-members        the most members at once, from the provider's log
//	                   (10, plus creates begun, minus removals finished):
//	                   VMs count from their clone, before their Node exists
//	member-create-s    median create of a new member ("create member" to
//	                   "member ready" in the provider's log)
//	member-remove-s    median removal of an old one (drain, Node, VM)
//	vsphere-rt/member  SOAP requests of the roll / 10
//	kube-req/member    the provider's Kubernetes requests of the roll / 10
func BenchmarkRollPool10(b *testing.B) {
	const replicas, surge = 10, 2
	const prefix = "roll"
	w := getWorld(b)
	b.StopTimer()
	b.ResetTimer()
	bs := w.applyBase(b, "roll-base", "bench-roll-a", "bench-roll-b")
	extra := fmt.Sprintf("%s\n  max_surge         = %d\n  max_unavailable   = 0", skipCIDRCheck, surge)
	dir := w.workdir(b, "roll", w.poolConfig(prefix, replicas, bs.templates[0], bs.networkingID, extra))
	destroyed := false
	destroy := func() {
		if destroyed {
			return
		}
		destroyed = true
		run, err := w.terraform(context.Background(), dir, "destroy", nil, "destroy", "-auto-approve", "-input=false", "-no-color", "-json")
		if err != nil {
			b.Error(err)
			return
		}
		report(b, "destroy of the pool of %d: %s", replicas, run.Wall.Round(time.Millisecond))
	}
	b.Cleanup(destroy)
	apply := w.applyPoolSetup(b, dir)
	report(b, "setup: two golden images and the networking %s; the pool of %d from %s %s",
		bs.apply.Wall.Round(time.Millisecond), replicas, bs.templates[0], apply.Wall.Round(time.Millisecond))

	capacity, err := watchCapacity(w.sb.ControlPlane.Client, prefix, replicas)
	if err != nil {
		b.Fatal(err)
	}
	defer capacity.close()

	for i := range b.N {
		// Every member Ready and schedulable before the roll (the watch's
		// first events may trail its cache's sync).
		deadline := time.Now().Add(time.Minute)
		for {
			ready, nodes, _, _, _, _ := capacity.snapshot()
			if ready == replicas && nodes == replicas {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("before the roll: %d of %d pool Nodes Ready and schedulable, want %d", ready, nodes, replicas)
			}
			time.Sleep(100 * time.Millisecond)
		}
		capacity.reset()

		from, to := bs.templates[i%2], bs.templates[(i+1)%2]
		config := w.poolConfig(prefix, replicas, to, bs.networkingID, extra)
		if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(config), 0o600); err != nil {
			b.Fatal(err)
		}
		name := fmt.Sprintf("roll%d", i)
		b.StartTimer()
		run, vc, kc, err := w.countedApply(b, dir, name)
		b.StopTimer()
		readyNow, nodesNow, minReady, maxNodes, events, dips := capacity.snapshot()
		if err != nil {
			b.Fatal(err)
		}
		entries, err := parseProviderLog(run.LogFile)
		if err != nil {
			b.Error(err)
		}
		pl := poolLog(entries, replicas)
		members, maxMembers := pl.Members, pl.MaxMembers
		creates, readyToDone := memberCreates(members)
		var removes []time.Duration
		for _, m := range members {
			if !m.RemoveStart.IsZero() && !m.RemovedEnd.IsZero() {
				removes = append(removes, m.RemovedEnd.Sub(m.RemoveStart))
			}
		}

		report(b, "roll of %d members from %s to %s, max_surge %d, max_unavailable 0: %s wall (%s per member)",
			replicas, from, to, surge, run.Wall.Round(time.Millisecond), (run.Wall / replicas).Round(time.Millisecond))
		report(b, "  the plan's warning: %s", warnings(run.Output))
		report(b, "  capacity (watch of the pool's Nodes, %d changes): min %d Ready and schedulable, max %d Nodes; at the end %d Ready of %d; "+
			"members at once (provider log) max %d", events, minReady, maxNodes, readyNow, nodesNow, maxMembers)
		report(b, "  new member create: %s; Ready to return: %s", distribution(creates), distribution(readyToDone))
		report(b, "  old member removal (drain, Node, VM): %s", distribution(removes))
		report(b, "  vSphere: %d SOAP requests = %.1f per replaced member: %s", sumCalls(vc), float64(sumCalls(vc))/replicas, formatCalls(vc))
		report(b, "  Kubernetes: %g requests of the provider = %.1f per replaced member: %s",
			kc.providerTotal(), kc.providerTotal()/replicas, kc.providerByFlow())
		if minReady < replicas {
			b.Errorf("capacity dropped below %d during the roll: %d Ready and schedulable pool Nodes at the least:\n%s",
				replicas, minReady, strings.Join(dips, "\n"))
		}
		if len(creates) != replicas || len(removes) != replicas {
			b.Errorf("the roll created %d and removed %d members, want %d and %d", len(creates), len(removes), replicas, replicas)
		}

		b.ReportMetric(run.Wall.Seconds()/replicas, "s/member")
		b.ReportMetric(float64(minReady), "min-ready")
		b.ReportMetric(float64(maxNodes), "max-nodes")
		b.ReportMetric(float64(maxMembers), "max-members")
		b.ReportMetric(percentile(creates, 50).Seconds(), "member-create-s")
		b.ReportMetric(percentile(removes, 50).Seconds(), "member-remove-s")
		b.ReportMetric(float64(sumCalls(vc))/replicas, "vsphere-rt/member")
		b.ReportMetric(kc.providerTotal()/replicas, "kube-req/member")
	}

	// The watch sees capacity drop: the destroy takes it to 0.
	capacity.reset()
	destroy()
	var readyNow, nodesNow, minReady, events int
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) { // the watch's last events may trail
		readyNow, nodesNow, minReady, _, events, _ = capacity.snapshot()
		if nodesNow == 0 || time.Now().After(deadline) {
			break
		}
	}
	report(b, "the capacity watch during the destroy: %d changes, min %d Ready and schedulable", events, minReady)
	if minReady != 0 || readyNow != 0 || nodesNow != 0 {
		b.Errorf("the capacity watch missed the destroy: %d changes, min %d Ready, %d Ready of %d Nodes at the end", events, minReady, readyNow, nodesNow)
	}
}

// warnings are the summaries of the warning diagnostics of -json output.
func warnings(out []byte) string {
	var ws []string
	for _, line := range splitLines(out) {
		if e, ok := parseEvent(line); ok && e.Diagnostic != nil && e.Diagnostic.Severity == "warning" {
			ws = append(ws, e.Diagnostic.Summary)
		}
	}
	if len(ws) == 0 {
		return "(none)"
	}
	// The plan and the apply's own plan of each resource say the same.
	return strings.Join(slices.Compact(ws), "; ")
}

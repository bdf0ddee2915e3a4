package bench

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// BenchmarkApply20Nodes applies a golden image and 20 windows_node (count =
// 20) with `terraform apply -parallelism=10`, then destroys them. One op is
// the apply's wall time (the image build included); the metrics:
//
//	s/node                 wall time of the node phase (first node's start to
//	                       last node's end) / 20
//	node-create-s          median create time of one node (apply_start to
//	                       apply_complete), max in node-create-max-s
//	image-s                the golden image build
//	ready-to-return-ms     median Result.ReadyToDone (the provider's own
//	                       measure: Node Ready to the end of the create)
//	ready-to-complete-ms   median time from the Node turning Ready (seen by a
//	                       watch) to Terraform's apply_complete of its resource
//	vsphere-rt/node        SOAP requests per node during the node phase
//	kube-req/node          the provider's Kubernetes requests per node
func BenchmarkApply20Nodes(b *testing.B) {
	const nodes, parallelism = 20, 10
	w := getWorld(b)
	logSandboxWaits(b)
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		name := fmt.Sprintf("apply%d", i)
		dir := w.workdir(b, name, w.config(fmt.Sprintf("bench-apply-%d", i), fmt.Sprintf("ap%d", i), nodes, skipCIDRCheck))
		destroy := func() {
			run, err := w.terraform(context.WithoutCancel(b.Context()), dir, "destroy", nil,
				"destroy", "-auto-approve", "-input=false", "-no-color", "-json", fmt.Sprintf("-parallelism=%d", parallelism))
			if err != nil {
				b.Error(err)
				return
			}
			report(b, "destroy of %d nodes and the image: %s", nodes, run.Wall.Round(time.Millisecond))
		}
		// Counters at the start, and when the image is done (the node
		// phase begins), read while the apply streams its events. An apply
		// the sandbox failed (sandboxFailed) is destroyed and made again.
		var (
			ready                *readyWatch
			run                  tfRun
			vcStart, vcNodes     map[string]int64
			kubeStart, kubeNodes kubeCount
		)
		for attempt := 1; ; attempt++ {
			var err error
			if ready, err = watchReady(w.sb.ControlPlane.Client); err != nil {
				b.Fatal(err)
			}
			vcStart, kubeStart, vcNodes = w.sb.VSphere.Calls(), mustCount(b, w), nil
			onLine := func(line []byte, _ time.Time) { // on this goroutine, as the lines come
				e, ok := parseEvent(line)
				if !ok || e.Type != "apply_complete" || e.Hook.Resource.ResourceType != "windows_golden_image" {
					return
				}
				vcNodes = w.sb.VSphere.Calls()
				if c, err := w.kube.count(b.Context()); err == nil {
					kubeNodes = c
				}
			}
			b.StartTimer()
			run, err = w.terraform(b.Context(), dir, fmt.Sprintf("apply%d", attempt), onLine,
				"apply", "-auto-approve", "-input=false", "-no-color", "-json", fmt.Sprintf("-parallelism=%d", parallelism))
			b.StopTimer()
			ready.close()
			if err == nil {
				break
			}
			destroy()
			if !sandboxFailed(err) || attempt == 3 {
				b.Fatal(err)
			}
			discardAttempt(b, i, "the apply of the image and the nodes")
		}
		vcEnd, kubeEnd := w.sb.VSphere.Calls(), mustCount(b, w)
		if vcNodes == nil {
			destroy()
			b.Fatal("the apply reported no apply_complete for the golden image")
		}

		// Per-resource times from the -json events.
		var creates, readyToComplete []time.Duration
		var image time.Duration
		var firstStart, lastEnd time.Time
		for _, s := range applySpans(run.Output) {
			switch s.Type {
			case "windows_golden_image":
				image = s.Duration()
			case "windows_node":
				creates = append(creates, s.Duration())
				if firstStart.IsZero() || s.Start.Before(firstStart) {
					firstStart = s.Start
				}
				if s.End.After(lastEnd) {
					lastEnd = s.End
				}
				node := fmt.Sprintf("ap%d-%s", i, strings.TrimSuffix(strings.TrimPrefix(s.Addr, "windows_node.n["), "]"))
				if at, ok := ready.readyAt(node); ok {
					readyToComplete = append(readyToComplete, s.End.Sub(at))
				}
			}
		}
		if len(creates) != nodes {
			destroy()
			b.Fatalf("%d windows_node creates in the apply's events, want %d", len(creates), nodes)
		}
		nodePhase := lastEnd.Sub(firstStart)

		// The provider's own account: stages and Ready-to-return.
		entries, err := parseProviderLog(run.LogFile)
		if err != nil {
			b.Error(err)
		}
		pc := nodeCreates(entries)
		var readyToDone []time.Duration
		for _, c := range pc {
			readyToDone = append(readyToDone, c.ReadyToDone)
		}

		vcByMethod, vcTotal := diffCalls(vcNodes, vcEnd)
		_, vcImage := diffCalls(vcStart, vcNodes)
		kubeN := kubeEnd.sub(kubeNodes)
		kubeImage := kubeNodes.sub(kubeStart)

		report(b, "apply of the image and %d nodes at -parallelism=%d: %s wall (image %s, node phase %s = %s per node)",
			nodes, parallelism, run.Wall.Round(time.Millisecond), image.Round(time.Millisecond), nodePhase.Round(time.Millisecond),
			(nodePhase / nodes).Round(time.Millisecond))
		report(b, "node create (apply_start to apply_complete): %s", distribution(creates))
		report(b, "Ready to return, the provider's Result.ReadyToDone: %s", distribution(readyToDone))
		report(b, "Ready (watch) to Terraform's apply_complete: %s", distribution(readyToComplete))
		report(b, "where a create spends its time (provider log, %d creates):\n%s", len(pc), stageTable(pc))
		report(b, "vSphere SOAP requests: image %d; node phase %d = %.1f per node: %s", vcImage, vcTotal, float64(vcTotal)/nodes, formatCalls(vcByMethod))
		report(b, "Kubernetes requests of the provider: image %g; node phase %g = %.1f per node, %.0f/s (API server execution time %.1f ms mean): %s",
			kubeImage.providerTotal(), kubeN.providerTotal(), kubeN.providerTotal()/nodes, kubeN.providerTotal()/nodePhase.Seconds(),
			1000*kubeN.ProviderExec/max(1, kubeN.providerTotal()), kubeN.providerByFlow())
		report(b, "Kubernetes requests of all clients in the node phase (kubelets, controllers, provider, bench watch): %s", topKeys(kubeN.All, 14))

		b.ReportMetric(nodePhase.Seconds()/nodes, "s/node")
		b.ReportMetric(percentile(creates, 50).Seconds(), "node-create-s")
		b.ReportMetric(percentile(creates, 100).Seconds(), "node-create-max-s")
		b.ReportMetric(image.Seconds(), "image-s")
		b.ReportMetric(float64(percentile(readyToDone, 50))/float64(time.Millisecond), "ready-to-return-ms")
		b.ReportMetric(float64(percentile(readyToDone, 100))/float64(time.Millisecond), "ready-to-return-max-ms")
		b.ReportMetric(float64(percentile(readyToComplete, 50))/float64(time.Millisecond), "ready-to-complete-ms")
		b.ReportMetric(float64(vcTotal)/nodes, "vsphere-rt/node")
		b.ReportMetric(kubeN.providerTotal()/nodes, "kube-req/node")
		destroy()
	}
}

// logSandboxWaits states the sandbox's simulated waits: what of a create's
// time is the simulated world waiting on purpose rather than work.
func logSandboxWaits(b *testing.B) {
	b.Helper()
	report(b, "sandbox simulated waits, as configured: host boot delay 0 per VM power-on (sandbox.Options.HostBootDelay unset); "+
		"host reboot delay winsim's default 2s (HostRebootDelay unset), used once per golden image build (the Containers feature's restart), never by a node create; "+
		"no vcsim task delays or fault rules")
}

// report prints a line of the benchmark's account to stdout: b.Logf keeps
// only the first lines of a benchmark's output.
func report(b *testing.B, format string, args ...any) {
	fmt.Printf("    %s: %s\n", b.Name(), strings.ReplaceAll(strings.TrimRight(fmt.Sprintf(format, args...), "\n"), "\n", "\n        "))
}

func mustCount(b *testing.B, w *world) kubeCount {
	b.Helper()
	c, err := w.kube.count(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// diffCalls returns after - before by method, and the total.
func diffCalls(before, after map[string]int64) (map[string]int64, int64) {
	d := map[string]int64{}
	var total int64
	for m, n := range after {
		if x := n - before[m]; x > 0 {
			d[m] = x
			total += x
		}
	}
	return d, total
}

func formatCalls(m map[string]int64) string {
	f := map[string]float64{}
	for k, v := range m {
		f[k] = float64(v)
	}
	return topKeys(f, 20)
}

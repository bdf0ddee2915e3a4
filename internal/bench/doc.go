// Package bench measures windows_node and windows_node_pool against the
// sandbox the way users run them: the provider binary installed with `terraform
// init -plugin-dir`, driven by the real Terraform CLI (issue 5, "Performance"):
//
//   - BenchmarkApply20Nodes: `terraform apply -parallelism=10` of a golden
//     image and 20 nodes; wall time, per-node create time and its stages,
//     Ready-to-return time, round trips per created node; then destroy.
//   - BenchmarkRefresh100Nodes: 100 nodes, then `terraform plan
//     -refresh-only` and `terraform plan`; wall time and the vSphere and
//     Kubernetes round trips per node, counted at the servers.
//
// and windows_node_pool (issue 13), its golden images and networking applied
// first in a configuration of their own, so the pool's figures are its own:
//
//   - BenchmarkPool50VsCount50: 50 windows_node with count, then a pool of
//     50, each from nothing at -parallelism=10 and destroyed; the wall-time
//     ratio pool/count (target <= 0.5), vSphere requests per member (target
//     <= 20) and per count node, the provider's Kubernetes requests of each.
//   - BenchmarkRefreshPool100: a pool of 100, then `terraform plan
//     -refresh-only` and `terraform plan`; the vSphere and Kubernetes
//     requests per run (targets <= 3 and <= 2, whatever the size), the image
//     configuration's refresh apart, wall time, and the peak resident set
//     of the provider processes (VmHWM sampled from /proc; target <= 150 MiB).
//   - BenchmarkRollPool10: a pool of 10 rolled to another golden image with
//     max_surge 2, max_unavailable 0; wall time, and a watch of the pool's
//     Nodes that fails the benchmark if fewer than 10 are Ready and
//     schedulable at any moment.
//
// and under the sandbox's latency model (issue 35: internal/sandbox/latency,
// real durations of vCenter and Windows divided by a time-scale factor, the
// hosts' provisioning units), against the critical path the model's
// durations add up to (latency.NodesPath, latency.Roll, latency.ImageBuild),
// each printing `time to N Ready / critical path = R`:
//
//   - BenchmarkScaledImageBuild: a golden image with one cumulative update
//     (and the servicing stack update it requires), the others' image.
//   - BenchmarkScaledReady: N = 1, 10, 20 (and 50 with BENCH_N50=1)
//     windows_node with count at -parallelism=N, then a pool of N with
//     max_parallel = N, on the sandbox's cluster of 3 hosts. Fails when R >
//     1.1 for N = 20, or when the pool is slower than the count for N >= 10.
//   - BenchmarkScaledRollPool10: a pool of 10 rolled with max_surge 2.
//   - BenchmarkTailQuickstart, BenchmarkTailPool20Roll: the scaled-time
//     acceptance runs: every operation at its P99, every resource's timeouts
//     its documented defaults divided by the same factor: the quickstart, a
//     pool of 20 and its roll pass, so no default fires early.
//
// BENCH_LATENCY_FACTOR and BENCH_TAIL_FACTOR override the factors
// (scaledFactor, tailFactor). One sandbox runs at a time: the plain one,
// then one per model (the scaled benchmarks' files sort last).
//
// Round trips are counted server-side: vSphere SOAP requests by method at the
// simulator (vcsim.Server.Calls), Kubernetes requests by the API server's own
// metrics. The provider gets a client certificate of its own user, and
// FlowSchemas matching that user, so the API server's priority-and-fairness
// metrics (apiserver_flowcontrol_dispatched_requests_total) count its
// requests alone, apart from the simulated kubelets' and controllers'.
//
// The package has benchmarks only (and quick tests of its parsers): `go test`
// without -bench starts nothing. Each runs its op once (-benchtime defaults
// to 1x here). Run them with `make bench`, or one of them with
//
//	go test -run '^$' -bench BenchmarkRollPool10 -timeout 60m ./internal/bench/
//
// On the 2-core machine they were measured on, the five without the model
// take about 8 minutes together, one sandbox shared; the scaled ones add
// their scaled critical paths (README, "Performance").
//
// They need the Terraform CLI (TF_ACC_TERRAFORM_PATH, else terraform or tofu
// on PATH) and the control plane binaries (SANDBOX_CONTROLPLANE_BIN, else
// tools/controlplane/build.sh builds them). BENCH_PROVIDER_BINARY benchmarks
// a given provider binary instead of building this tree; BENCH_KEEP=1 keeps
// the run's directory (Terraform working directories with the provider's
// logs, the sandbox's logs).
package bench

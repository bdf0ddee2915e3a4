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
// On the 2-core machine they were measured on, all five take about 8
// minutes together, one sandbox shared.
//
// They need the Terraform CLI (TF_ACC_TERRAFORM_PATH, else terraform or tofu
// on PATH) and the control plane binaries (SANDBOX_CONTROLPLANE_BIN, else
// tools/controlplane/build.sh builds them). BENCH_PROVIDER_BINARY benchmarks
// a given provider binary instead of building this tree; BENCH_KEEP=1 keeps
// the run's directory (Terraform working directories with the provider's
// logs, the sandbox's logs).
package bench

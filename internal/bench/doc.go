// Package bench measures windows_node against the sandbox the way users run
// it: the provider binary installed with `terraform init -plugin-dir`, driven
// by the real Terraform CLI (issue 5, "Performance"):
//
//   - BenchmarkApply20Nodes: `terraform apply -parallelism=10` of a golden
//     image and 20 nodes; wall time, per-node create time and its stages,
//     Ready-to-return time, round trips per created node; then destroy.
//   - BenchmarkRefresh100Nodes: 100 nodes, then `terraform plan
//     -refresh-only` and `terraform plan`; wall time and the vSphere and
//     Kubernetes round trips per node, counted at the servers.
//
// Round trips are counted server-side: vSphere SOAP requests by method at the
// simulator (vcsim.Server.Calls), Kubernetes requests by the API server's own
// metrics. The provider gets a client certificate of its own user, and
// FlowSchemas matching that user, so the API server's priority-and-fairness
// metrics (apiserver_flowcontrol_dispatched_requests_total) count its
// requests alone, apart from the simulated kubelets' and controllers'.
//
// The package has benchmarks only (and quick tests of its parsers): `go test`
// without -bench starts nothing. Run them with `make bench`, or
//
//	go test -run '^$' -bench . -benchtime 1x -timeout 40m ./internal/bench/
//
// They need the Terraform CLI (TF_ACC_TERRAFORM_PATH, else terraform or tofu
// on PATH) and the control plane binaries (SANDBOX_CONTROLPLANE_BIN, else
// tools/controlplane/build.sh builds them). BENCH_PROVIDER_BINARY benchmarks
// a given provider binary instead of building this tree; BENCH_KEEP=1 keeps
// the run's directory (Terraform working directories with the provider's
// logs, the sandbox's logs).
package bench

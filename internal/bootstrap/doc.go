// Package bootstrap is the Windows recipe as code: typed configuration in,
// ordered PowerShell steps out, for building a golden image and for joining a
// node. It is pure (no I/O): rendering is golden-file tested, and running the
// steps is the caller's job (over internal/remote).
//
// Every step is idempotent (check, then act) so a failed apply can simply run
// again, names itself with a "# step: <name>" line (the simulated host's
// fault injection and scripts.log key on it), and uses only the statement
// shapes of the contract in internal/sandbox/winsim's package documentation, so that
// what the bootstrap expects of a host is exactly what the simulator does.
package bootstrap

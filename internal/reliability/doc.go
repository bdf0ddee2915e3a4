// Package reliability holds the acceptance tests that prove the provider's
// promises under faults, least privilege and hostile input: each fault is
// injected into the sandbox during a real terraform apply or destroy, and
// each case ends with a diagnostic naming the stage, vSphere, the cluster and
// the state agreeing, and the next apply converging. The tests live in
// reliability_test; this file only documents the package.
package reliability

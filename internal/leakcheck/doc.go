// Package leakcheck holds the acceptance test that a whole provider run,
// a golden image and 20 nodes applied and destroyed through the real
// Terraform CLI against its own sandbox, leaves none of the provider's
// goroutines behind; `make race-apply` runs such an apply with the provider built with the race detector.
// It has no code of its own: only the tests and their TestMain.
package leakcheck

// Package leakcheck holds the acceptance test that a whole provider run,
// a golden image and 20 nodes applied and destroyed through the real
// Terraform CLI against its own sandbox, has no data race (make race runs it
// under -race) and leaves none of the provider's goroutines behind. It has
// no code of its own: only the test and its TestMain.
package leakcheck

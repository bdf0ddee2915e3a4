//go:build racecanary

package main

// One data race, on purpose, at start-up: `make race-apply` first runs a
// provider built with this tag and expects the race detector's report on
// it, proving that the detector reaches the provider through Terraform and
// that the check fails on a race. The tag is set nowhere else.
func init() {
	var starts int
	done := make(chan struct{})
	go func() {
		starts++ // written here and below, with nothing ordering the two
		close(done)
	}()
	starts++
	<-done
}

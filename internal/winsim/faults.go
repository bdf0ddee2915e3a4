package winsim

// SetFaults replaces the injected faults. Clearing RefuseConnections brings the
// listeners back; setting it closes them (existing connections are dropped).
func (h *Host) SetFaults(f Faults) {
	h.mu.Lock()
	was := h.faults.RefuseConnections
	h.faults = f
	h.fired = map[int]int{}
	h.mu.Unlock()
	switch {
	case f.RefuseConnections && !was:
		h.goDown()
	case !f.RefuseConnections && was:
		h.comeUp()
	}
}

// Faults returns the faults in force.
func (h *Host) Faults() Faults {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.faults
}

func (h *Host) authFails() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.faults.FailAuth
}

// takeFault returns the first step fault matching a script, counting its use.
func (h *Host) takeFault(step, text string) (StepFault, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, f := range h.faults.Steps {
		match := (f.Step != "" && f.Step == step) || (f.Match != nil && f.Match.MatchString(text))
		if !match {
			continue
		}
		if f.Times > 0 && h.fired[i] >= f.Times {
			continue
		}
		h.fired[i]++
		return f, true
	}
	return StepFault{}, false
}

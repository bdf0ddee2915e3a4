package winsim

import (
	"encoding/binary"
	"time"
)

// Recovery action types (SC_ACTION_TYPE).
const (
	scActionNone    = 0
	scActionRestart = 1
	scActionReboot  = 2
	scActionRun     = 3
)

type scAction struct {
	Type  int
	Delay time.Duration
}

type failureActions struct {
	ResetSeconds uint32
	Actions      []scAction
}

// failureActions reads the FailureActions value: a SERVICE_FAILURE_ACTIONS
// structure as ChangeServiceConfig2 stores it (reset period, two pointers,
// the count, a pointer, then Type/Delay pairs of SC_ACTION, 32-bit little
// endian).
func (h *Host) failureActions(name string) (failureActions, bool) {
	v, ok := h.reg.get(serviceKey(name), "FailureActions")
	if !ok || v.Type != RegBinary || len(v.Bin) < 20 {
		return failureActions{}, false
	}
	b := v.Bin
	fa := failureActions{ResetSeconds: binary.LittleEndian.Uint32(b[0:])}
	n := int(binary.LittleEndian.Uint32(b[12:]))
	for i := 0; i < n && 20+8*i+8 <= len(b); i++ {
		o := 20 + 8*i
		fa.Actions = append(fa.Actions, scAction{
			Type:  int(binary.LittleEndian.Uint32(b[o:])),
			Delay: time.Duration(binary.LittleEndian.Uint32(b[o+4:])) * time.Millisecond,
		})
	}
	return fa, true
}

// setFailureActions writes the FailureActions value.
func (h *Host) setFailureActions(name string, fa failureActions) error {
	b := make([]byte, 20+8*len(fa.Actions))
	binary.LittleEndian.PutUint32(b[0:], fa.ResetSeconds)
	binary.LittleEndian.PutUint32(b[12:], uint32(len(fa.Actions)))
	if len(fa.Actions) > 0 {
		binary.LittleEndian.PutUint32(b[16:], 0x14) // lpsaActions: the array follows
	}
	for i, a := range fa.Actions {
		binary.LittleEndian.PutUint32(b[20+8*i:], uint32(a.Type))
		binary.LittleEndian.PutUint32(b[24+8*i:], uint32(a.Delay/time.Millisecond))
	}
	return h.reg.set(serviceKey(name), "FailureActions", RegValue{Type: RegBinary, Bin: b})
}

// ServiceFailures is how many times a service failed since its failure
// count was last reset (what recovery actions count).
func (h *Host) ServiceFailures(name string) int {
	r := h.scm.run(name)
	h.scm.mu.Lock()
	defer h.scm.mu.Unlock()
	return r.failures
}

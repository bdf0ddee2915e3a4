package winsim_test

import "runtime"

type runtimeMem struct {
	heap       uint64 // heap in use plus goroutine stacks
	goroutines int
}

func (m *runtimeMem) read() {
	runtime.GC()
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	m.heap, m.goroutines = s.HeapAlloc+s.StackInuse, runtime.NumGoroutine()
}

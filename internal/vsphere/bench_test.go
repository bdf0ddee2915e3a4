package vsphere_test

import (
	"fmt"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// BenchmarkCloneToIP is a node's vSphere part of create: clone the 2022
// template with a static-IP sysprep customization, power on, wait for the
// customization and the IP.
func BenchmarkCloneToIP(b *testing.B) {
	e := newEnv(b)
	ctx := b.Context()
	i := 0
	e.counter.reset()
	for b.Loop() {
		i++
		ip := fmt.Sprintf("127.%d.%d.%d", 100+i/65536, (i/256)%256, i%256)
		vm, err := e.c.Clone(ctx, e.cloneSpec(b, fmt.Sprintf("bench-%d", i), ip))
		if err != nil {
			b.Fatal(err)
		}
		if err := e.c.PowerOn(ctx, vm); err != nil {
			b.Fatal(err)
		}
		if err := e.c.WaitForCustomization(ctx, vm); err != nil {
			b.Fatal(err)
		}
		if _, err := e.c.WaitForIP(ctx, vm, vsphere.IPFilter{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(e.counter.n.Load())/float64(i), "roundtrips/op")
}

// BenchmarkReadVM is a node's vSphere part of refresh.
func BenchmarkReadVM(b *testing.B) {
	e := newEnv(b)
	ctx := b.Context()
	vm, err := e.c.Clone(ctx, e.cloneSpec(b, "bench-read", "127.0.99.1"))
	if err != nil {
		b.Fatal(err)
	}
	e.counter.reset()
	n := 0
	for b.Loop() {
		n++
		if _, err := e.c.ReadVM(ctx, vm); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(e.counter.n.Load())/float64(n), "roundtrips/op")
}

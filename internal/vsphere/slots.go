package vsphere

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	"github.com/vmware/govmomi/vim25/types"
	"golang.org/x/sync/semaphore"
)

// vCenter's provisioning capacity, as the provider respects it. An ESXi
// host has 16 units for provisioning operations at once; a full clone takes
// 4 of them and a linked clone 1, on the source's host and on the
// destination host both (once when they are one), and vCenter queues an
// operation beyond them until others end ("vCenter limits for tasks running
// at the same time", VMware performance blog, 2021; vSphere's "Limits on
// Simultaneous Migrations": an operation over a host's cost "does not
// proceed immediately, but is queued"). Every full clone of one template so
// takes 4 of its host's 16 units, whichever host it lands on.
//
// A queued task is waited for, never failed (waitTask ends only on success
// or error). But a queue the provider cannot see makes its timeouts lie: a
// create whose clone waited 10 minutes in vCenter's queue has 10 minutes
// less for Windows' first boot. So the provider clones no more at once per
// host than the host has units (Config.ProvisioningUnitsPerHost), waiting
// in its own queue, where the wait is logged and counted for what it is.
// Neither Cluster API Provider vSphere nor hashicorp/vsphere limits this
// (CAPV's issue #1070 "rate-limit vcenter tasks for vsphereVMs" is open;
// both treat a queued task as one in progress and wait), so a 20-node pool
// of theirs puts 20 clones in vCenter's queue at once.
//
// Power-ons are not limited here: a host runs 60 at once, and the
// provider's power-ons are bounded by Terraform's -parallelism (10) and a
// pool's max_parallel; one vCenter queues beyond 60 is waited for like any
// queued task.
const (
	// DefaultProvisioningUnitsPerHost is an ESXi 6.x-8.x host's units.
	DefaultProvisioningUnitsPerHost = 16
	// UnitsPerFullClone and UnitsPerLinkedClone are a clone's cost.
	UnitsPerFullClone   = 4
	UnitsPerLinkedClone = 1
)

// progressInterval is how often a long wait says what it waits for
// (tflog INFO, TF_LOG_PROVIDER=info): at least every minute.
var progressInterval = time.Minute

// hostSlots are the provider's own count of the units its clones hold on
// each host: FIFO by weight (x/sync/semaphore), as vCenter queues.
type hostSlots struct {
	units int64 // per host; 0: no limit
	mu    sync.Mutex
	hosts map[string]*semaphore.Weighted
}

// newHostSlots limits each host to units; units < 0 sets no limit, 0
// the default.
func newHostSlots(units int) *hostSlots {
	switch {
	case units == 0:
		units = DefaultProvisioningUnitsPerHost
	case units < 0:
		units = 0
	}
	return &hostSlots{units: int64(units), hosts: map[string]*semaphore.Weighted{}}
}

// acquire takes units on each of hosts (in their order, so two clones
// between the same two hosts never hold one each), waiting while they are
// taken and saying so every progressInterval; what names the wait in the
// log. release gives them back.
func (s *hostSlots) acquire(ctx context.Context, hosts []string, units int, what string) (release func(), err error) {
	noop := func() {}
	if s == nil || s.units == 0 || len(hosts) == 0 {
		return noop, nil
	}
	hosts = append([]string(nil), hosts...)
	sort.Strings(hosts)
	n := min(int64(units), s.units)
	var held []*semaphore.Weighted
	release = func() {
		for _, sem := range held {
			sem.Release(n)
		}
	}
	for i, h := range hosts {
		if h == "" || (i > 0 && h == hosts[i-1]) {
			continue
		}
		sem := s.host(h)
		if !sem.TryAcquire(n) {
			stop := logEvery(ctx, "waiting for a provisioning slot on ESXi host "+h, func() map[string]any {
				return map[string]any{"waiting_for": what, "host": h, "units": n, "units_per_host": s.units}
			})
			err := sem.Acquire(ctx, n)
			stop()
			if err != nil {
				release()
				return nil, fmt.Errorf("waiting for %d of host %s's %d provisioning units: %w", n, h, s.units, err)
			}
		}
		held = append(held, sem)
	}
	return release, nil
}

func (s *hostSlots) host(h string) *semaphore.Weighted {
	s.mu.Lock()
	defer s.mu.Unlock()
	sem, ok := s.hosts[h]
	if !ok {
		sem = semaphore.NewWeighted(s.units)
		s.hosts[h] = sem
	}
	return sem
}

// logEvery logs msg at INFO with fields() every progressInterval until stop
// is called or ctx ends: a timer, not a poll of anything.
func logEvery(ctx context.Context, msg string, fields func() map[string]any) (stop func()) {
	began := time.Now()
	t := time.NewTicker(progressInterval)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				f := fields()
				f["waited"] = time.Since(began).Round(time.Second).String()
				tflog.Info(ctx, msg, f)
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		<-finished
	}
}

// waitProgress is what a long wait's log line says of obj from its last
// reported properties p: a task's method, object, state (queued or
// running) and progress; a VM's power, VMware Tools, customization and IP.
func waitProgress(obj types.ManagedObjectReference, p props) map[string]any {
	f := map[string]any{"object_id": obj.Value}
	if p == nil {
		f["state"] = "not reported yet"
		return f
	}
	str := func(key, field string) {
		switch v := p[key].(type) {
		case string:
			f[field] = v
		case fmt.Stringer:
			f[field] = v.String()
		}
	}
	switch obj.Type {
	case "Task":
		f["state"] = string(taskState(p["info.state"]))
		str("info.name", "method")
		str("info.entityName", "object")
		if v, ok := p["info.progress"].(int32); ok {
			f["progress_percent"] = v
		}
	case TypeVirtualMachine:
		if v, ok := p["runtime.powerState"].(types.VirtualMachinePowerState); ok {
			f["power_state"] = string(v)
		}
		str("guest.toolsRunningStatus", "tools")
		if v, ok := p["guest.guestOperationsReady"].(bool); ok {
			f["guest_operations_ready"] = v
		}
		if info := customizationInfoOf(p[propCustomizationInfo]); info != nil {
			f["customization"] = info.CustomizationStatus
		}
		str("guest.ipAddress", "ip")
	}
	return f
}

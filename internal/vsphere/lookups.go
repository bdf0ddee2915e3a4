package vsphere

import (
	"context"
	"sync"

	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// Lookups resolves clone placements (template, folder, resource pool,
// datastore, network, host) once per Client and remembers them for the
// run: every node of a run clones from the same template into the same
// folder and pool, and each lookup is a round trip. Concurrent clones share
// one lookup in flight. A remembered object that has gone since (a template
// replaced at the same path, a folder re-created) makes the clone fail as
// not found; Forget then drops what is remembered and the caller resolves
// again (winnode's CloneNode does, once).
//
// Clones use it, and the plan's comparison of a template given in two forms
// (which VM each names). Reads, imports and the plan-time checks keep asking
// vCenter, so they never see an object that has gone.
type Lookups struct {
	c *Client

	mu       sync.Mutex
	refs     memo[lookupKey, types.ManagedObjectReference]
	sources  memo[types.ManagedObjectReference, *mo.VirtualMachine]
	backings memo[types.ManagedObjectReference, types.BaseVirtualDeviceBackingInfo]
}

// lookupKey names a lookup: by the form given (kind "vm", "folder"; a
// relative folder path prefixed with its resource pool's id) or by managed
// object id (kind "id", path the reference's type:value).
type lookupKey struct{ kind, path string }

// Lookups returns the Client's placement cache.
func (c *Client) Lookups() *Lookups {
	c.lookOnce.Do(func() { c.look = &Lookups{c: c} })
	return c.look
}

// Forget drops everything remembered and reports whether there was anything.
func (l *Lookups) Forget() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	had := l.refs.len()+l.sources.len()+l.backings.len() > 0
	l.refs, l.sources, l.backings = memo[lookupKey, types.ManagedObjectReference]{}, memo[types.ManagedObjectReference, *mo.VirtualMachine]{}, memo[types.ManagedObjectReference, types.BaseVirtualDeviceBackingInfo]{}
	return had
}

func (l *Lookups) ref(k lookupKey, find func() (types.ManagedObjectReference, error)) (types.ManagedObjectReference, error) {
	return l.refs.get(&l.mu, k, find, nil)
}

func (l *Lookups) byID(ref types.ManagedObjectReference, find func() (types.ManagedObjectReference, error)) (types.ManagedObjectReference, error) {
	return l.ref(lookupKey{"id", ref.Type + ":" + ref.Value}, find)
}

// FindVM is Client.FindVM, remembered.
func (l *Lookups) FindVM(ctx context.Context, ref string) (types.ManagedObjectReference, error) {
	if vmIDPattern.MatchString(ref) {
		return l.byID(VMRef(ref), func() (types.ManagedObjectReference, error) { return l.c.FindVMByID(ctx, ref) })
	}
	return l.ref(lookupKey{"vm", ref}, func() (types.ManagedObjectReference, error) { return l.c.FindVM(ctx, ref) })
}

// FindFolder is Client.FindFolder, remembered (a relative path by the
// datacenter it is relative to).
func (l *Lookups) FindFolder(ctx context.Context, folder string, pool types.ManagedObjectReference, create bool) (types.ManagedObjectReference, error) {
	key := lookupKey{"folder", folder}
	if isRelativePath(folder) {
		key.path = pool.Value + ":" + folder
	}
	return l.ref(key, func() (types.ManagedObjectReference, error) { return l.c.FindFolder(ctx, folder, pool, create) })
}

// FindResourcePoolByID is Client.FindResourcePoolByID, remembered.
func (l *Lookups) FindResourcePoolByID(ctx context.Context, id string) (types.ManagedObjectReference, error) {
	return l.byID(types.ManagedObjectReference{Type: TypeResourcePool, Value: id}, func() (types.ManagedObjectReference, error) {
		return l.c.FindResourcePoolByID(ctx, id)
	})
}

// FindDatastoreByID is Client.FindDatastoreByID, remembered.
func (l *Lookups) FindDatastoreByID(ctx context.Context, id string) (types.ManagedObjectReference, error) {
	return l.byID(types.ManagedObjectReference{Type: TypeDatastore, Value: id}, func() (types.ManagedObjectReference, error) {
		return l.c.FindDatastoreByID(ctx, id)
	})
}

// FindDatastoreClusterByID is Client.FindDatastoreClusterByID, remembered.
func (l *Lookups) FindDatastoreClusterByID(ctx context.Context, id string) (types.ManagedObjectReference, error) {
	return l.byID(types.ManagedObjectReference{Type: TypeStoragePod, Value: id}, func() (types.ManagedObjectReference, error) {
		return l.c.FindDatastoreClusterByID(ctx, id)
	})
}

// FindNetworkByID is Client.FindNetworkByID, remembered.
func (l *Lookups) FindNetworkByID(ctx context.Context, id string) (types.ManagedObjectReference, error) {
	return l.byID(NetworkRef(id), func() (types.ManagedObjectReference, error) { return l.c.FindNetworkByID(ctx, id) })
}

// FindHostByID is Client.FindHostByID, remembered.
func (l *Lookups) FindHostByID(ctx context.Context, id string) (types.ManagedObjectReference, error) {
	return l.byID(types.ManagedObjectReference{Type: TypeHostSystem, Value: id}, func() (types.ManagedObjectReference, error) {
		return l.c.FindHostByID(ctx, id)
	})
}

// source returns a clone source's properties, remembered when it is a
// template (a template cannot change: it cannot be powered on, reconfigured
// or snapshotted without first turning it back into a VM, which a run that
// clones from it does not do). Callers must not modify the result.
func (l *Lookups) source(ctx context.Context, ref types.ManagedObjectReference) (*mo.VirtualMachine, error) {
	return l.sources.get(&l.mu, ref, func() (*mo.VirtualMachine, error) {
		var m mo.VirtualMachine
		err := l.c.retrieveOne(ctx, ref, []string{"name", "config.template", "config.hardware.device", "snapshot", "resourcePool", "runtime.host"}, &m)
		return &m, err
	}, func(m *mo.VirtualMachine) bool { return m.Config != nil && m.Config.Template })
}

// backing returns the NIC backing of a network, remembered.
func (l *Lookups) backing(ref types.ManagedObjectReference, read func() (types.BaseVirtualDeviceBackingInfo, error)) (types.BaseVirtualDeviceBackingInfo, error) {
	return l.backings.get(&l.mu, ref, read, nil)
}

// memo remembers values by key; concurrent callers of a key share one load.
// A failed load (or one keep refuses) is not remembered.
type memo[K comparable, V any] struct {
	m map[K]*memoEntry[V]
}

type memoEntry[V any] struct {
	done chan struct{}
	v    V
	err  error
}

func (m *memo[K, V]) len() int { return len(m.m) }

// get returns the value of k, loading it once; mu guards m.
func (m *memo[K, V]) get(mu *sync.Mutex, k K, load func() (V, error), keep func(V) bool) (V, error) {
	mu.Lock()
	if m.m == nil {
		m.m = map[K]*memoEntry[V]{}
	}
	if e, ok := m.m[k]; ok {
		mu.Unlock()
		<-e.done
		if e.err == nil {
			return e.v, nil
		}
		// The load this caller joined failed: try again on its own.
		return load()
	}
	e := &memoEntry[V]{done: make(chan struct{})}
	m.m[k] = e
	mu.Unlock()
	e.v, e.err = load()
	if e.err != nil || (keep != nil && !keep(e.v)) {
		mu.Lock()
		if m.m[k] == e {
			delete(m.m, k)
		}
		mu.Unlock()
	}
	close(e.done)
	return e.v, e.err
}

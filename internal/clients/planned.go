package clients

import (
	"slices"
	"sync"
)

// Planned holds what resources planned earlier in this provider process
// (one terraform command) will do, for the plan-time checks of resources
// planned after them. Terraform plans a resource after those it depends
// on, so a fact recorded here reaches a dependent resource's plan; an
// unrelated one may be planned in any order, which is why checks at apply
// time never read it.
type Planned struct {
	mu     sync.Mutex
	guards []string
}

// AddGuard records DaemonSets a windows_linux_daemonset_guard will give a
// kubernetes.io/os=linux node selector: "<namespace>/<name>", or
// "<namespace>/*" when it guards the namespace's unconstrained DaemonSets.
func (p *Planned) AddGuard(entries ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range entries {
		if !slices.Contains(p.guards, e) {
			p.guards = append(p.guards, e)
		}
	}
}

// Guards returns the DaemonSets planned guards will cover (see AddGuard).
func (p *Planned) Guards() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.guards)
}

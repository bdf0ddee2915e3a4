package winpool

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/winnode"
	"github.com/wincluster/terraform-provider-windows/internal/winversion"
)

// LabelPool is the label every member carries: the pool's name prefix. A
// workload, a PodDisruptionBudget or a NetworkPolicy selects a pool by it.
const LabelPool = "windows.wincluster.io/node-pool"

// Labels are a member's labels: the pool's, its own pool label, and the
// Windows build read from the guest (winnode.NodeLabels), neither of which
// a configured label overrides.
func (p *Pool) Labels(build string) map[string]string {
	labels := maps.Clone(p.Template.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelPool] = p.Prefix
	return winnode.NodeLabels(labels, build)
}

// Adopt gives imported members the pool's revision: an import cannot tell
// what they were made from, so the first apply takes them as they are
// instead of replacing working nodes (as an imported windows_node records
// the configuration's create-only inputs in place).
func Adopt(members []Member, revision string) []Member {
	out := make([]Member, len(members))
	for i, m := range members {
		if m.Revision == "" {
			m.Revision = revision
		}
		out[i] = m
	}
	return out
}

// Restamp gives the members of revision from the revision to: the pool's
// inputs changed in a way that makes no other machine (its template given in
// another form), so they are current, not outdated.
func Restamp(members []Member, from, to string) []Member {
	out := make([]Member, len(members))
	for i, m := range members {
		if m.Revision == from {
			m.Revision = to
		}
		out[i] = m
	}
	return out
}

// ApplySettings sets the pool's labels and taints on the members which
// (members created by this apply joined with them), MaxParallel at a time.
// Only the keys the provider owns change (kube.ApplyNodeSettings).
func ApplySettings(ctx context.Context, nodes Nodes, p Pool, members []Member, which func(Member) bool) error {
	var g errgroup.Group
	g.SetLimit(max(p.MaxParallel, 1))
	var (
		mu   sync.Mutex
		errs []error
	)
	for _, m := range members {
		if !which(m) || m.Health == VMMissing || m.Health == NotJoined {
			continue
		}
		// Every member is tried; the errors are reported together.
		g.Go(func() error {
			_, err := nodes.SetNodeSettings(ctx, m.Name, kube.NodeSettings{
				ProviderID: m.ProviderID(), Labels: p.Labels(winversion.TrimUBR(m.WindowsBuildFull)), Taints: p.Template.Taints,
			})
			if err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("member %s: %w", m.Name, err))
				mu.Unlock()
			}
			return nil
		})
	}
	_ = g.Wait()
	return errors.Join(errs...)
}

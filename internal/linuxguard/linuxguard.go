// Package linuxguard keeps Linux DaemonSets off Windows nodes: it gives
// each DaemonSet a guard selects the kubernetes.io/os=linux node selector
// (internal/kube applies it under its own field manager) and gives the field
// back when the guard lets the DaemonSet go. It decides which DaemonSets a
// guard selects, in what order it releases and guards them, and what a
// refresh finds; it knows nothing of Terraform.
package linuxguard

import (
	"context"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
)

// Kube is what a guard needs of the cluster; *kube.Client is it. A missing
// DaemonSet is a *kube.NotFoundError.
type Kube interface {
	// UnconstrainedDaemonSets lists the DaemonSets of a namespace that may
	// run on Windows nodes (no OS node selector or affinity).
	UnconstrainedDaemonSets(ctx context.Context, namespace string) ([]string, error)
	// GuardedDaemonSets lists those whose node selector the guard owns.
	GuardedDaemonSets(ctx context.Context, namespace string) ([]string, error)
	FindDaemonSet(ctx context.Context, namespace, name string) (*appsv1.DaemonSet, error)
	GuardDaemonSet(ctx context.Context, namespace, name string) (*appsv1.DaemonSet, error)
	UnguardDaemonSet(ctx context.Context, namespace, name string) error
}

var _ Kube = (*kube.Client)(nil)

// Guard guards the DaemonSets of one namespace.
type Guard struct {
	Kube      Kube
	Namespace string
	// Progress reports each DaemonSet guarded or released.
	Progress func(msg string, fields map[string]any)
}

func (g *Guard) progress(msg, name string) {
	if g.Progress != nil {
		g.Progress(msg, map[string]any{"namespace": g.Namespace, "name": name})
	}
}

// Select is what a new guard selects: names when given (named), else every
// DaemonSet of the namespace that may run on Windows nodes now.
func (g *Guard) Select(ctx context.Context, names []string, named bool) ([]string, error) {
	if named {
		return names, nil
	}
	return g.Kube.UnconstrainedDaemonSets(ctx, g.Namespace)
}

// Reselect is what a changed guard selects, and releases the DaemonSets it
// selected before (previous) and no longer does, giving their node selector
// back. planned is the new selection when it is known (named); otherwise
// (names removed) the guard keeps what it selected and adds what may run on
// Windows nodes now. The first failure stops it.
func (g *Guard) Reselect(ctx context.Context, previous, planned []string, named bool) ([]string, error) {
	selected := planned
	if !named {
		unconstrained, err := g.Kube.UnconstrainedDaemonSets(ctx, g.Namespace)
		if err != nil {
			return nil, err
		}
		selected = union(previous, unconstrained)
	}
	for _, name := range previous {
		if slices.Contains(selected, name) {
			continue
		}
		g.progress("releasing DaemonSet node selector", name)
		if err := g.Kube.UnguardDaemonSet(ctx, g.Namespace, name); err != nil {
			return nil, err
		}
	}
	return selected, nil
}

// Apply guards each selected DaemonSet and returns those it guards. Every
// DaemonSet is tried; the errors, one per DaemonSet that could not be
// guarded, come back together.
func (g *Guard) Apply(ctx context.Context, selected []string) (guarded []string, errs []error) {
	for _, name := range selected {
		g.progress("applying DaemonSet node selector", name)
		_, err := g.Kube.GuardDaemonSet(ctx, g.Namespace, name)
		switch {
		case kube.IsNotFound(err):
			errs = append(errs, fmt.Errorf("DaemonSet %s/%s does not exist: create it first, or remove it from names.", g.Namespace, name))
		case err != nil:
			errs = append(errs, err)
		default:
			guarded = append(guarded, name)
		}
	}
	return guarded, errs
}

// Observed is what a refresh finds of a guard's DaemonSets.
type Observed struct {
	// Present are the selected DaemonSets that exist; Guarded those of them
	// that cannot run on Windows nodes; Missing those deleted.
	Present, Guarded, Missing []string
}

// Observe reads the selected DaemonSets; known false (an import without
// names) selects those whose node selector the guard owns.
func (g *Guard) Observe(ctx context.Context, selected []string, known bool) (Observed, error) {
	var obs Observed
	if !known {
		var err error
		if selected, err = g.Kube.GuardedDaemonSets(ctx, g.Namespace); err != nil {
			return obs, err
		}
	}
	for _, name := range selected {
		ds, err := g.Kube.FindDaemonSet(ctx, g.Namespace, name)
		if kube.IsNotFound(err) {
			obs.Missing = append(obs.Missing, name)
			continue
		}
		if err != nil {
			return obs, err
		}
		obs.Present = append(obs.Present, name)
		if kube.LinuxOnly(ds) {
			obs.Guarded = append(obs.Guarded, name)
		}
	}
	return obs, nil
}

// Release gives the node selector of each DaemonSet back. Every DaemonSet
// is tried; the errors come back together.
func (g *Guard) Release(ctx context.Context, selected []string) []error {
	var errs []error
	for _, name := range selected {
		g.progress("releasing DaemonSet node selector", name)
		if err := g.Kube.UnguardDaemonSet(ctx, g.Namespace, name); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// union returns the sorted, de-duplicated elements of a and b.
func union(a, b []string) []string {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}

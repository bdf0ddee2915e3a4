package linuxguard_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/linuxguard"
)

var errBoom = errors.New("boom")

// cluster is an in-memory implementation of linuxguard's Kube: the
// DaemonSets of one namespace, whether each selects Linux and whether the
// guard owns that selector. fail[op] fails an operation ("GuardDaemonSet
// kube-proxy" fails it for one DaemonSet); calls records them in order.
type cluster struct {
	daemonSets map[string]*daemonSet
	fail       map[string]error
	calls      []string
}

type daemonSet struct{ linux, ours bool }

func newCluster(sets map[string]daemonSet) *cluster {
	c := &cluster{daemonSets: map[string]*daemonSet{}, fail: map[string]error{}}
	for name, ds := range sets {
		c.daemonSets[name] = &ds
	}
	return c
}

func (c *cluster) enter(op, name string) error {
	c.calls = append(c.calls, strings.TrimSpace(op+" "+name))
	if err := c.fail[op]; err != nil {
		return err
	}
	return c.fail[op+" "+name]
}

func (c *cluster) list(keep func(*daemonSet) bool) []string {
	var out []string
	for name, ds := range c.daemonSets {
		if keep(ds) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

func (c *cluster) UnconstrainedDaemonSets(_ context.Context, _ string) ([]string, error) {
	if err := c.enter("UnconstrainedDaemonSets", ""); err != nil {
		return nil, err
	}
	return c.list(func(ds *daemonSet) bool { return !ds.linux }), nil
}

func (c *cluster) GuardedDaemonSets(_ context.Context, _ string) ([]string, error) {
	if err := c.enter("GuardedDaemonSets", ""); err != nil {
		return nil, err
	}
	return c.list(func(ds *daemonSet) bool { return ds.ours }), nil
}

func (c *cluster) object(name string) (*appsv1.DaemonSet, error) {
	ds := c.daemonSets[name]
	if ds == nil {
		return nil, &kube.NotFoundError{Kind: "DaemonSet", Name: name}
	}
	obj := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if ds.linux {
		obj.Spec.Template.Spec.NodeSelector = map[string]string{kube.LabelOS: "linux"}
	}
	return obj, nil
}

func (c *cluster) FindDaemonSet(_ context.Context, _, name string) (*appsv1.DaemonSet, error) {
	if err := c.enter("FindDaemonSet", name); err != nil {
		return nil, err
	}
	return c.object(name)
}

func (c *cluster) GuardDaemonSet(_ context.Context, _, name string) (*appsv1.DaemonSet, error) {
	if err := c.enter("GuardDaemonSet", name); err != nil {
		return nil, err
	}
	if ds := c.daemonSets[name]; ds != nil {
		ds.linux, ds.ours = true, true
	}
	return c.object(name)
}

func (c *cluster) UnguardDaemonSet(_ context.Context, _, name string) error {
	if err := c.enter("UnguardDaemonSet", name); err != nil {
		return err
	}
	if ds := c.daemonSets[name]; ds != nil && ds.ours {
		ds.linux, ds.ours = false, false
	}
	return nil
}

func guard(c *cluster) (*linuxguard.Guard, *[]string) {
	var progress []string
	return &linuxguard.Guard{Kube: c, Namespace: "kube-system", Progress: func(msg string, f map[string]any) {
		progress = append(progress, msg+" "+f["namespace"].(string)+"/"+f["name"].(string))
	}}, &progress
}

// TestCreate selects the named DaemonSets, or every unconstrained one, and
// guards each; one that cannot be guarded does not stop the others.
func TestCreate(t *testing.T) {
	c := newCluster(map[string]daemonSet{"kube-proxy": {}, "kube-flannel-ds": {}, "node-exporter": {}, "calico-node": {linux: true}})
	g, progress := guard(c)
	selected, err := g.Select(t.Context(), nil, false)
	if err != nil || !slices.Equal(selected, []string{"kube-flannel-ds", "kube-proxy", "node-exporter"}) {
		t.Fatalf("Select = %v, %v: want the unconstrained ones", selected, err)
	}
	if named, _ := g.Select(t.Context(), []string{"kube-proxy"}, true); !slices.Equal(named, []string{"kube-proxy"}) {
		t.Errorf("Select(named) = %v", named)
	}
	c.fail["GuardDaemonSet kube-flannel-ds"] = errBoom
	guarded, errs := g.Apply(t.Context(), append(selected, "gone"))
	if !slices.Equal(guarded, []string{"kube-proxy", "node-exporter"}) {
		t.Errorf("guarded %v", guarded)
	}
	if len(errs) != 2 || !errors.Is(errs[0], errBoom) ||
		errs[1].Error() != "DaemonSet kube-system/gone does not exist: create it first, or remove it from names." {
		t.Errorf("errors %v: want one per DaemonSet not guarded", errs)
	}
	if len(*progress) != 4 || (*progress)[0] != "applying DaemonSet node selector kube-system/kube-flannel-ds" {
		t.Errorf("progress %q", *progress)
	}
	c.fail["UnconstrainedDaemonSets"] = errBoom
	if _, err := g.Select(t.Context(), nil, false); !errors.Is(err, errBoom) {
		t.Errorf("Select = %v, want the listing's error", err)
	}
}

// TestReselect releases what the guard no longer selects, before anything
// is guarded; without names it keeps what it had and adds the
// unconstrained DaemonSets.
func TestReselect(t *testing.T) {
	cases := []struct {
		name            string
		previous, named []string
		known           bool
		fail            string
		want, unguarded []string
		wantErr         bool
	}{
		{name: "a name dropped", previous: []string{"kube-proxy", "node-exporter"}, named: []string{"kube-proxy"}, known: true,
			want: []string{"kube-proxy"}, unguarded: []string{"node-exporter"}},
		{name: "a name added", previous: []string{"kube-proxy"}, named: []string{"kube-proxy", "node-exporter"}, known: true,
			want: []string{"kube-proxy", "node-exporter"}},
		{name: "names removed", previous: []string{"kube-proxy"}, want: []string{"kube-flannel-ds", "kube-proxy"}},
		{name: "the listing fails", previous: []string{"kube-proxy"}, fail: "UnconstrainedDaemonSets", wantErr: true},
		{name: "a release fails", previous: []string{"kube-proxy", "node-exporter"}, named: []string{}, known: true,
			fail: "UnguardDaemonSet kube-proxy", wantErr: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := newCluster(map[string]daemonSet{"kube-proxy": {linux: true, ours: true}, "node-exporter": {linux: true, ours: true},
				"kube-flannel-ds": {}})
			if c.fail != "" {
				k.fail[c.fail] = errBoom
			}
			g, _ := guard(k)
			got, err := g.Reselect(t.Context(), c.previous, c.named, c.known)
			if (err != nil) != c.wantErr {
				t.Fatalf("err = %v, want an error: %v", err, c.wantErr)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("selected %v, want %v", got, c.want)
			}
			var unguarded []string
			for _, call := range k.calls {
				if name, ok := strings.CutPrefix(call, "UnguardDaemonSet "); ok && !c.wantErr {
					unguarded = append(unguarded, name)
				}
				if strings.HasPrefix(call, "GuardDaemonSet") {
					t.Errorf("calls %v: Reselect guards nothing", k.calls)
				}
			}
			if !slices.Equal(unguarded, c.unguarded) {
				t.Errorf("released %v, want %v", unguarded, c.unguarded)
			}
		})
	}
}

// TestObserve reads what exists and what is guarded, and names the
// DaemonSets deleted; an import without names reads what the guard owns.
func TestObserve(t *testing.T) {
	k := newCluster(map[string]daemonSet{"kube-proxy": {linux: true, ours: true}, "node-exporter": {}, "calico-node": {linux: true}})
	g, _ := guard(k)
	obs, err := g.Observe(t.Context(), []string{"gone", "kube-proxy", "node-exporter"}, true)
	if err != nil {
		t.Fatal(err)
	}
	want := linuxguard.Observed{Present: []string{"kube-proxy", "node-exporter"}, Guarded: []string{"kube-proxy"}, Missing: []string{"gone"}}
	if !slices.Equal(obs.Present, want.Present) || !slices.Equal(obs.Guarded, want.Guarded) || !slices.Equal(obs.Missing, want.Missing) {
		t.Errorf("Observe = %+v, want %+v", obs, want)
	}
	if obs, err = g.Observe(t.Context(), nil, false); err != nil || !slices.Equal(obs.Present, []string{"kube-proxy"}) {
		t.Errorf("Observe(imported) = %+v, %v: want what the guard owns", obs, err)
	}
	k.fail["FindDaemonSet node-exporter"] = errBoom
	obs, err = g.Observe(t.Context(), []string{"gone", "node-exporter"}, true)
	if !errors.Is(err, errBoom) || !slices.Equal(obs.Missing, []string{"gone"}) {
		t.Errorf("Observe = %+v, %v: want the error, and what was missing before it", obs, err)
	}
}

// TestRelease tries every DaemonSet, and reports each failure.
func TestRelease(t *testing.T) {
	k := newCluster(map[string]daemonSet{"kube-proxy": {linux: true, ours: true}, "node-exporter": {linux: true, ours: true}})
	k.fail["UnguardDaemonSet kube-proxy"] = errBoom
	g, _ := guard(k)
	errs := g.Release(t.Context(), []string{"kube-proxy", "node-exporter"})
	if len(errs) != 1 || !errors.Is(errs[0], errBoom) {
		t.Errorf("errors %v, want kube-proxy's", errs)
	}
	if ds := k.daemonSets["node-exporter"]; ds.linux || ds.ours {
		t.Error("node-exporter kept its selector: a failure must not stop the others")
	}
}

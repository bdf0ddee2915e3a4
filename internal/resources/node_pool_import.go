package resources

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	tfpath "github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/wincluster/terraform-provider-windows/internal/winnode"
	"github.com/wincluster/terraform-provider-windows/internal/winpool"
)

// discoverPool finds the members of an imported pool: every Windows node
// named <prefix>-... (ref is the prefix), or the nodes ref lists
// (comma-separated), which must share a prefix. Nodes whose VM backs no
// Node yet (clones of a golden image) count too.
func discoverPool(ctx context.Context, m *winnode.Manager, ref string) (string, []winnode.Found, error) {
	prefix := strings.TrimSpace(ref)
	var names []string
	for n := range strings.SplitSeq(ref, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	if strings.Contains(ref, ",") {
		// A list of members: their common prefix is what precedes the last "-".
		prefix = ""
		for _, n := range names {
			i := strings.LastIndex(n, "-")
			if i <= 0 {
				return "", nil, fmt.Errorf("%q is not a pool member's name (<prefix>-<suffix>). Import by the prefix (win) or a comma-separated list of member names (win-abcde,win-fghij)", n)
			}
			if prefix != "" && n[:i] != prefix {
				return "", nil, fmt.Errorf("the members %s do not share a name prefix (%q and %q): a pool's members are <prefix>-<suffix>", ref, prefix, n[:i])
			}
			prefix = n[:i]
		}
	} else {
		names = nil
	}
	if prefix == "" {
		return "", nil, fmt.Errorf("import the pool by its name prefix (win) or a comma-separated list of member names (win-abcde,win-fghij)")
	}
	found, err := m.Discover(ctx, winnode.DiscoverOptions{NamePrefix: prefix + "-", IncludeUnjoined: true})
	if err != nil {
		return "", nil, err
	}
	if names != nil {
		found = slices.DeleteFunc(found, func(f winnode.Found) bool { return !slices.Contains(names, f.Name()) })
		for _, n := range names {
			if !slices.ContainsFunc(found, func(f winnode.Found) bool { return f.Name() == n }) {
				return "", nil, fmt.Errorf("no Windows node named %s: neither a Windows Node nor a VM cloned from a golden image has that name", n)
			}
		}
	}
	if len(found) == 0 {
		return "", nil, fmt.Errorf("no Windows node is named %s-...: import by the prefix of existing nodes (the part before the last \"-\"), or list them", prefix)
	}
	return prefix, found, nil
}

// setImportedPool writes what an import knows of a pool into an empty
// state: its members as found (no revision: the first apply adopts them),
// their placement when they share it, and the defaults of the inputs VMs do
// not record. The first apply records the configuration's inputs in place.
func setImportedPool(ctx context.Context, prefix string, found []winnode.Found, state attributeSetter) diag.Diagnostics {
	var diags diag.Diagnostics
	members := make([]winpool.Member, 0, len(found))
	for _, f := range found {
		im := f.Imported()
		mb := winpool.Member{Name: f.Name(), Identity: im.Identity, WindowsBuildFull: im.WindowsBuildFull}
		if f.Node != nil {
			mb.Created = f.Node.CreationTimestamp.UTC()
		}
		mb.Observe(winnode.Observed{VM: f.VM, Node: f.Node}, time.Now())
		members = append(members, mb)
	}
	first := found[0].Imported()
	var model nodePoolModel
	model.setMembers(ctx, members, &diags)
	attrs := map[string]any{
		"id": prefix, "name_prefix": prefix, "replicas": int64(len(found)), "folder": first.Folder, "linked_clone": first.LinkedClone,
		"max_parallel": int64(poolDefaultMaxParallel), "max_surge": int64(poolDefaultMaxSurge), "max_unavailable": int64(poolDefaultMaxUnavailable),
		"members": model.Members, "ready_replicas": model.ReadyReplicas, "anti_affinity": false,
	}
	if first.ResourcePoolID != "" {
		attrs["resource_pool_id"] = first.ResourcePoolID
	}
	defaults := importDefaults()
	delete(defaults, "cni")
	maps.Copy(attrs, defaults)
	for name, v := range attrs {
		diags.Append(state.SetAttribute(ctx, tfpath.Root(name), v)...)
	}
	return diags
}

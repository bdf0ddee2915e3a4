package vsphere_test

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/vcsim"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// TestSandboxEnforcesTheDocumentedRoles: the sandbox's vCenter grants the
// provider's account exactly the guide's roles (vcsim keeps its own copy:
// the simulated world imports nothing of the provider), on as many objects
// and with the same propagation; the roles hold every privilege a method
// the provider calls needs, and no other; and the sandbox models the
// privileges of every such method (it refuses the rest).
func TestSandboxEnforcesTheDocumentedRoles(t *testing.T) {
	sim := map[string][]string{}
	for _, r := range vcsim.ProviderRoles {
		sim[r.Name] = sortedCopy(r.Privileges)
	}
	doc := map[string][]string{}
	var docGrants, simGrants []string
	for _, r := range vsphere.Roles {
		docGrants = append(docGrants, fmt.Sprintf("%s propagate=%v", r.Name, r.Propagate))
		if r.Name == vcsim.ReadOnlyRole {
			continue
		}
		doc[r.Name] = sortedCopy(r.Privileges)
	}
	for name, privs := range doc {
		if !slices.Equal(sim[name], privs) {
			t.Errorf("role %s: the sandbox grants %v, the guide %v", name, sim[name], privs)
		}
	}
	for name := range sim {
		if _, ok := doc[name]; !ok {
			t.Errorf("the sandbox grants role %s, which the guide (vsphere.Roles) does not list", name)
		}
	}
	for _, g := range (&vcsim.Server{Datacenter: "DC0"}).ProviderGrants() {
		simGrants = append(simGrants, fmt.Sprintf("%s propagate=%v", g.Role, g.Propagate))
	}
	// One row of the guide per kind of object; the sandbox may grant a
	// role on several objects of that kind (its networks).
	sort.Strings(docGrants)
	sort.Strings(simGrants)
	docGrants, simGrants = slices.Compact(docGrants), slices.Compact(simGrants)
	if !slices.Equal(docGrants, simGrants) {
		t.Errorf("the sandbox grants %v, the guide %v", simGrants, docGrants)
	}

	held := map[string]bool{"System.Anonymous": true, "System.View": true, "System.Read": true}
	for _, r := range vsphere.Roles {
		for _, p := range r.Privileges {
			held[p] = true
		}
	}
	needed := map[string]bool{}
	for _, p := range vsphere.RolePrivileges() {
		needed[p] = true
		if !held[p] {
			t.Errorf("no role of the guide holds %s, which MethodPrivileges needs", p)
		}
	}
	for p := range held {
		if !needed[p] {
			t.Errorf("a role of the guide holds %s, which no method in MethodPrivileges needs", p)
		}
	}
	var unmodelled []string
	for m := range vsphere.MethodPrivileges {
		if !vcsim.Modelled(m) {
			unmodelled = append(unmodelled, m)
		}
	}
	if len(unmodelled) > 0 {
		sort.Strings(unmodelled)
		t.Errorf("the sandbox's vCenter does not model the privileges of %s, which the provider calls: add them to internal/sandbox/vcsim/authz.go", strings.Join(unmodelled, ", "))
	}
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	sort.Strings(out)
	return out
}

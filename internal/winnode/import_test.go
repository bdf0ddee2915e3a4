package winnode_test

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
	"github.com/wincluster/terraform-provider-windows/internal/winnode"
)

// inventory is a vCenter and cluster with the kinds of VM import and list
// meet: a node joined by this provider (providerID), one joined by hand (no
// providerID, named like the VM), a clone of a golden image that never
// joined, an unrelated VM, and the template.
func inventory(t *testing.T) *world {
	t.Helper()
	w := newWorld(t)
	node := func(name, providerID string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{kube.LabelOS: "windows"}},
			Spec: corev1.NodeSpec{ProviderID: providerID}}
	}
	w.vs.add("/dc/vm/k8s/pool-a/win-a", &vsphere.VMInfo{VM: vsphere.VM{Name: "win-a", BIOSUUID: "4211AAAA-0000-0000-0000-00000000000A", InstanceUUID: "5011aaaa-0000-0000-0000-00000000000a"}})
	w.vs.add("/dc/vm/k8s/WIN-B", &vsphere.VMInfo{VM: vsphere.VM{Name: "WIN-B", BIOSUUID: "4211AAAA-0000-0000-0000-00000000000B"}})
	w.vs.add("/dc/vm/k8s/win-c", &vsphere.VMInfo{VM: vsphere.VM{Name: "win-c", BIOSUUID: "4211AAAA-0000-0000-0000-00000000000C"},
		ExtraConfig: map[string]string{winnode.ImageBuildKey: imageBuild}})
	w.vs.add("/dc/vm/web/web-1", &vsphere.VMInfo{VM: vsphere.VM{Name: "web-1", BIOSUUID: "4211AAAA-0000-0000-0000-00000000000D"}})
	w.k.nodes["win-a"] = node("win-a", "vsphere://4211aaaa-0000-0000-0000-00000000000a")
	w.k.nodes["win-b"] = node("win-b", "")
	return w
}

// TestImport finds a node's VM by what a user has at hand (Locate) and
// reads it as a list would have found it (Describe).
func TestImport(t *testing.T) {
	cases := []struct {
		ref       string
		want      string // the error; "" for success
		path      string
		node      string
		matchedBy string
	}{
		{ref: "/dc/vm/k8s/pool-a/win-a", path: "/dc/vm/k8s/pool-a/win-a", node: "win-a", matchedBy: winnode.MatchedByProviderID},
		{ref: "vsphere://4211AAAA-0000-0000-0000-00000000000A", path: "/dc/vm/k8s/pool-a/win-a", node: "win-a", matchedBy: winnode.MatchedByProviderID},
		{ref: "5011aaaa-0000-0000-0000-00000000000a", path: "/dc/vm/k8s/pool-a/win-a", node: "win-a", matchedBy: winnode.MatchedByProviderID},
		{ref: "/dc/vm/k8s/WIN-B", path: "/dc/vm/k8s/WIN-B", node: "win-b", matchedBy: winnode.MatchedByName},
		{ref: "/dc/vm/k8s/win-c", path: "/dc/vm/k8s/win-c", matchedBy: winnode.MatchedByImage},
		{ref: "/dc/vm/web/web-1", path: "/dc/vm/web/web-1"},
		{ref: templatePath, want: "win2022 is a template, not a node's VM (a windows_golden_image imports templates)"},
		{ref: "/dc/vm/k8s/nope", want: "virtual machine /dc/vm/k8s/nope not found"},
		{ref: "vsphere://4211ffff-0000-0000-0000-000000000000", want: "virtual machine 4211ffff-0000-0000-0000-000000000000 not found"},
	}
	for _, c := range cases {
		t.Run(c.ref, func(t *testing.T) {
			w := inventory(t)
			id, err := w.m.Locate(t.Context(), c.ref)
			var f winnode.Found
			if err == nil {
				f, err = w.m.Describe(t.Context(), id)
			}
			if c.want != "" {
				if err == nil || err.Error() != c.want {
					t.Fatalf("err = %v, want %q", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			node := ""
			if f.Node != nil {
				node = f.Node.Name
			}
			if f.InventoryPath != c.path || node != c.node || f.MatchedBy != c.matchedBy {
				t.Errorf("found %s, Node %q by %q; want %s, %q by %q", f.InventoryPath, node, f.MatchedBy, c.path, c.node, c.matchedBy)
			}
		})
	}
}

// TestImportWithoutFolderRights: a VM whose inventory path vCenter does not
// give is reported with the privilege to grant, never imported with an
// empty path.
func TestImportWithoutFolderRights(t *testing.T) {
	w := inventory(t)
	w.vs.fail["InventoryPaths"] = errors.New("NoPermission")
	id, err := w.m.Locate(t.Context(), "/dc/vm/k8s/pool-a/win-a")
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.m.Describe(t.Context(), id)
	if err == nil || !strings.Contains(err.Error(), "reading the inventory path of VM win-a") || !strings.Contains(err.Error(), "System.Read") {
		t.Errorf("err = %v", err)
	}
}

// TestDiscoverWithoutFolderRights: a VM found whose inventory path vCenter
// does not give (a folder above it unreadable) fails the list, naming it.
func TestDiscoverWithoutFolderRights(t *testing.T) {
	w := inventory(t)
	w.vs.paths["vm-101"] = ""
	_, err := w.m.Discover(t.Context(), winnode.DiscoverOptions{})
	if err == nil || !strings.Contains(err.Error(), "(vm-101): vCenter returned no inventory path") || !strings.Contains(err.Error(), "System.Read") {
		t.Errorf("err = %v", err)
	}
}

func TestDiscover(t *testing.T) {
	cases := []struct {
		name string
		opts winnode.DiscoverOptions
		want string // Found names and how each matched
		err  string
	}{
		{name: "joined", want: "win-a providerID, win-b name"},
		{name: "unjoined too", opts: winnode.DiscoverOptions{IncludeUnjoined: true}, want: "win-a providerID, win-b name, win-c image"},
		{name: "folder", opts: winnode.DiscoverOptions{Folder: "/dc/vm/k8s/pool-a"}, want: "win-a providerID"},
		{name: "prefix", opts: winnode.DiscoverOptions{NamePrefix: "win-b", IncludeUnjoined: true}, want: "win-b name"},
		{name: "folder missing", opts: winnode.DiscoverOptions{Folder: "/dc/vm/gone"}, err: "folder /dc/vm/gone not found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := inventory(t)
			found, err := w.m.Discover(t.Context(), c.opts)
			if c.err != "" {
				if err == nil || err.Error() != c.err || !vsphere.IsNotFound(err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range found {
				got = append(got, f.Name()+" "+f.MatchedBy)
				if f.InventoryPath == "" {
					t.Errorf("%s has no inventory path", f.Name())
				}
			}
			if strings.Join(got, ", ") != c.want {
				t.Errorf("found %v, want %s", got, c.want)
			}
			if n := strings.Count(strings.Join(w.vs.names(), " "), "InventoryPaths"); n != 1 {
				t.Errorf("read inventory paths %d times, want once for all the VMs found", n)
			}
		})
	}
}

package resources_test

import (
	"context"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// TestAccNode_list is what `terraform query` (Terraform 1.14+) sees of the
// sandbox, through the protocol calls it makes (the CLIs here have no
// query command). Two nodes made by the provider (through the CLI) share a
// folder with what a site has besides: a Windows VM joined by hand (its
// Node has no providerID, and is named like the VM in lower case), a clone
// of the golden image that never joined, a Linux VM whose Node has its
// providerID, and a Windows Node whose VM is gone. The list finds exactly
// the two nodes and the hand-joined VM (the clone with include_unjoined),
// nothing else anywhere in the inventory; each result's resource is the
// state an import by its identity yields, which is the state an import by
// inventory path or providerID yields too; and importing a VM by identity
// works whatever the CLI version, also after it is deleted.
func TestAccNode_list(t *testing.T) {
	acctest.PreCheck(t)
	image := acctest.Name("img")
	seq := acctest.Seq()
	// A folder of its own inside NodeFolder (the sandbox's /DC0/vm/windows,
	// or TF_ACC_LAB_NODE_FOLDER's), created by the apply: the provider's
	// user creates folders only where its role is (windows-nodes holds
	// Folder.Create, propagated from the node folder).
	folder := fmt.Sprintf("%s/list-%d", acctest.NodeFolder, seq)
	n0, n1 := fmt.Sprintf("lst-%d-a", seq), fmt.Sprintf("lst-%d-b", seq)
	config := strings.ReplaceAll(acctest.NodeConfig(image, []string{n0, n1}, ""),
		fmt.Sprintf("folder            = %q", acctest.NodeFolder), fmt.Sprintf("folder            = %q", folder))
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNodesDestroyed(t),
		Steps: []resource.TestStep{{
			Config: config,
			Check: func(s *terraform.State) error {
				checkNodeList(t, s, seq, folder, n0, n1)
				return nil
			},
		}},
	})
}

func checkNodeList(t *testing.T, s *terraform.State, seq int64, folder, n0, n1 string) {
	ctx := context.Background()
	vc, k := acctest.VSphere(t), acctest.Kube(t)
	attrs := func(addr string) map[string]string { return s.RootModule().Resources[addr].Primary.Attributes }
	folderRef, err := vc.FindFolderByPath(ctx, folder, false)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := vc.FindResourcePoolByID(ctx, os.Getenv("SANDBOX_RESOURCE_POOL_ID"))
	if err != nil {
		t.Fatal(err)
	}
	// What the site has besides the provider's nodes, deleted before the
	// configuration is destroyed (a clone of the golden image must not
	// outlive it).
	var vms []*vsphere.VM
	var nodes []string
	defer func() {
		for _, vm := range vms {
			_ = vc.Destroy(context.Background(), vm)
		}
		for _, n := range nodes {
			_ = k.CoreV1().Nodes().Delete(context.Background(), n, metav1.DeleteOptions{})
		}
	}()
	clone := func(source, name string) *vsphere.VM {
		src, err := vc.FindVMByPath(ctx, source)
		if err != nil {
			t.Fatal(err)
		}
		vm, err := vc.Clone(ctx, vsphere.CloneSpec{Source: src, Name: name, Folder: folderRef, ResourcePool: pool})
		if err != nil {
			t.Fatal(err)
		}
		vms = append(vms, vm)
		return vm
	}
	node := func(name, osLabel, providerID string) {
		_, err := k.CoreV1().Nodes().Create(ctx, &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{kube.LabelOS: osLabel}},
			Spec:       corev1.NodeSpec{ProviderID: providerID},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, name)
	}
	base := os.Getenv("SANDBOX_TEMPLATE_2022")
	hand := clone(base, fmt.Sprintf("HAND-%d", seq))
	handNode := strings.ToLower(hand.Name)
	node(handNode, "windows", "")
	stray := clone(attrs("windows_golden_image.test")["template_path"], fmt.Sprintf("stray-%d", seq))
	linux := clone(base, fmt.Sprintf("lin-%d", seq))
	node(linux.Name, "linux", "vsphere://"+strings.ToLower(linux.BIOSUUID))
	node(fmt.Sprintf("ghost-%d", seq), "windows", "vsphere://4211dead-beef-0000-0000-000000000000")

	p := acctest.NewProtocol(t)
	const typ = "windows_node"
	uuid := map[string]string{n0: attrs("windows_node.n0")["instance_uuid"], n1: attrs("windows_node.n1")["instance_uuid"],
		handNode: hand.InstanceUUID, stray.Name: stray.InstanceUUID}

	// The folder: the two nodes and the hand-joined VM, sorted by name,
	// each identified by its instance UUID.
	inFolder := listNames(t, p.List(typ, map[string]tftypes.Value{"folder": str(folder)}, false, 0), uuid)
	if want := sorted(n0, n1, handNode); !slices.Equal(inFolder, want) {
		t.Fatalf("list in %s: %v, want %v", folder, inFolder, want)
	}
	// With include_unjoined, the golden image's clone that backs no Node.
	unjoined := listNames(t, p.List(typ, map[string]tftypes.Value{"folder": str(folder), "include_unjoined": tftypes.NewValue(tftypes.Bool, true)}, false, 0), uuid)
	if want := sorted(n0, n1, handNode, stray.Name); !slices.Equal(unjoined, want) {
		t.Fatalf("list in %s with include_unjoined: %v, want %v", folder, unjoined, want)
	}
	// name_prefix and the CLI's limit.
	if got := listNames(t, p.List(typ, map[string]tftypes.Value{"name_prefix": str(fmt.Sprintf("lst-%d-", seq))}, false, 0), uuid); !slices.Equal(got, sorted(n0, n1)) {
		t.Fatalf("list with name_prefix: %v, want %v", got, sorted(n0, n1))
	}
	if got := p.List(typ, map[string]tftypes.Value{"folder": str(folder)}, false, 1); len(got) != 1 {
		t.Fatalf("list with limit 1: %d results", len(got))
	}
	// The whole inventory: every result is a VM backing a Windows Node —
	// never the vCenter's other VMs, a template, the Linux VM, the unjoined
	// clone or the Node without a VM.
	everywhere := p.List(typ, nil, false, 0)
	if e := listErrors(everywhere); e != "" {
		t.Fatal(e)
	}
	var names []string
	for _, r := range everywhere {
		names = append(names, checkBacksWindowsNode(t, vc, k, r))
	}
	for _, want := range []string{n0, n1, handNode} {
		if !slices.Contains(names, want) {
			t.Fatalf("list of the whole inventory %v lacks %s", names, want)
		}
	}
	// With include_unjoined, also VMs cloned from a golden image — never
	// the golden image's template itself, which carries the same record.
	template, err := vc.FindVMByPath(ctx, attrs("windows_golden_image.test")["template_path"])
	if err != nil {
		t.Fatal(err)
	}
	templateInfo, err := vc.ReadVM(ctx, template)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range p.List(typ, map[string]tftypes.Value{"include_unjoined": tftypes.NewValue(tftypes.Bool, true)}, false, 0) {
		if e := acctest.Errors(r.Diagnostics); e != "" {
			t.Fatal(e)
		}
		switch id := acctest.Attr(r.Identity, "instance_uuid"); {
		case id == templateInfo.InstanceUUID:
			t.Fatalf("list with include_unjoined returned the golden image's template: %q", r.DisplayName)
		case strings.HasSuffix(r.DisplayName, "no Node: not joined)"):
			ref, err := vc.FindVMByUUID(ctx, id, true)
			if err != nil {
				t.Fatal(err)
			}
			vm, err := vc.ReadVM(ctx, ref)
			if err != nil {
				t.Fatal(err)
			}
			if vm.Template || vm.ExtraConfig["guestinfo.windows.build-full"] == "" {
				t.Fatalf("list with include_unjoined returned %q, a template or a VM not cloned from a golden image", r.DisplayName)
			}
		default:
			checkBacksWindowsNode(t, vc, k, r)
		}
	}

	// include_resource: each result's resource is what an import by its
	// identity yields, which an import by inventory path yields too.
	withResources := p.List(typ, map[string]tftypes.Value{"folder": str(folder), "include_unjoined": tftypes.NewValue(tftypes.Bool, true)}, true, 0)
	if e := listErrors(withResources); e != "" {
		t.Fatal(e)
	}
	imported := map[string]acctest.Imported{}
	for _, r := range withResources {
		name := acctest.Attr(r.Resource, "name")
		byIdentity := checkImportByIdentity(t, p, typ, acctest.Attr(r.Resource, "vm_path"), map[string]any{"instance_uuid": uuid[name]})
		if !r.Resource.Equal(byIdentity.State) {
			t.Fatalf("list result %s: its resource differs from an import by identity:\n%s", name, diff(byIdentity.State, r.Resource))
		}
		imported[name] = byIdentity
	}
	// A node made by the provider: import by the Node's providerID too, and
	// the import agrees with the state the provider wrote at create.
	cli := attrs("windows_node.n0")
	byProviderID := p.Import(typ, cli["provider_id"], nil)
	if e := acctest.Errors(byProviderID.Diagnostics); e != "" || !byProviderID.State.Equal(imported[n0].State) {
		t.Fatalf("import by providerID %s: errors %q, state:\n%s", cli["provider_id"], e, diff(imported[n0].State, byProviderID.State))
	}
	for _, a := range []string{"id", "name", "vm_path", "folder", "instance_uuid", "bios_uuid", "provider_id", "resource_pool_id",
		"windows_build", "windows_build_full", "kubelet_version", "pod_cidr", "num_cpus", "memory_mb", "disk_size_gb", "joined", "ready"} {
		if got := acctest.Attr(imported[n0].State, a); got != cli[a] {
			t.Errorf("%s imported %s = %q, created %q", n0, a, got, cli[a])
		}
	}
	// The hand-joined VM is named after its Node; the clone joined nothing.
	if got := acctest.Attr(imported[handNode].State, "vm_path"); got != folder+"/"+hand.Name {
		t.Errorf("%s vm_path %q, want %s", handNode, got, folder+"/"+hand.Name)
	}
	if got := acctest.Attr(imported[handNode].State, "joined"); got != "true" {
		t.Errorf("%s joined = %s, want true", handNode, got)
	}
	if got := acctest.Attr(imported[stray.Name].State, "joined"); got != "false" {
		t.Errorf("%s joined = %s, want false", stray.Name, got)
	}

	// A folder that does not exist is an error on folder.
	missing := p.List(typ, map[string]tftypes.Value{"folder": str("/DC0/vm/no-such-folder")}, false, 0)
	if len(missing) != 1 || !strings.Contains(acctest.Errors(missing[0].Diagnostics), "Folder not found") ||
		missing[0].Diagnostics[0].Attribute == nil || missing[0].Diagnostics[0].Attribute.String() != `AttributeName("folder")` {
		t.Fatalf("list in a missing folder: %+v, want one error on folder", missing)
	}

	// The hand-joined VM deleted: a refresh (without identity, as the CLIs
	// here run it) drops it from the state without an error.
	if err := vc.Destroy(ctx, hand); err != nil {
		t.Fatal(err)
	}
	checkGoneWithoutIdentity(t, p, typ, imported[handNode])
}

// listNames checks a list's results and returns their names (from the
// display name), checking each identity against uuids.
func listNames(t *testing.T, results []acctest.ListResult, uuids map[string]string) []string {
	t.Helper()
	if e := listErrors(results); e != "" {
		t.Fatal(e)
	}
	var names []string
	for _, r := range results {
		name, how, _ := strings.Cut(r.DisplayName, " ")
		if got := acctest.Attr(r.Identity, "instance_uuid"); got != uuids[name] {
			t.Fatalf("list result %q: identity %q, want instance UUID %q", r.DisplayName, got, uuids[name])
		}
		if !strings.Contains(how, "VM "+path.Dir(acctest.NodeFolder)+"/") {
			t.Fatalf("list result %q: the display name does not say which VM", r.DisplayName)
		}
		names = append(names, name)
	}
	return names
}

func listErrors(results []acctest.ListResult) string {
	var out []string
	for _, r := range results {
		if e := acctest.Errors(r.Diagnostics); e != "" {
			out = append(out, e)
		}
	}
	return strings.Join(out, "\n")
}

// checkBacksWindowsNode checks that a list result is a VM (not a template)
// backing a Windows Node of that name, and returns the name.
func checkBacksWindowsNode(t *testing.T, vc *vsphere.Client, k *kube.Client, r acctest.ListResult) string {
	t.Helper()
	name, _, _ := strings.Cut(r.DisplayName, " ")
	ref, err := vc.FindVMByUUID(context.Background(), acctest.Attr(r.Identity, "instance_uuid"), true)
	if err != nil {
		t.Fatalf("list result %q: %v", r.DisplayName, err)
	}
	vm, err := vc.ReadVM(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	n, err := k.FindNode(context.Background(), name)
	switch {
	case err != nil:
		t.Fatalf("list result %q: no Node %s: %v", r.DisplayName, name, err)
	case vm.Template:
		t.Fatalf("list result %q is a template", r.DisplayName)
	case n.Labels[kube.LabelOS] != "windows":
		t.Fatalf("list result %q: Node %s is not a Windows node (%s=%q)", r.DisplayName, name, kube.LabelOS, n.Labels[kube.LabelOS])
	case n.Spec.ProviderID != "" && !strings.EqualFold(n.Spec.ProviderID, "vsphere://"+vm.BIOSUUID):
		t.Fatalf("list result %q: Node %s has providerID %s, not the VM's", r.DisplayName, name, n.Spec.ProviderID)
	case n.Spec.ProviderID == "" && strings.ToLower(vm.Name) != name:
		t.Fatalf("list result %q: Node %s has no providerID and is not named like VM %s", r.DisplayName, name, vm.Name)
	}
	return name
}

func str(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }

func sorted(s ...string) []string { return slices.Sorted(slices.Values(s)) }

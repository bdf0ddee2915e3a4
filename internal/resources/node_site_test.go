package resources_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/vcsim"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// TestAccNode_site: a node as a datacenter's vSphere runs it. Placed by
// Storage DRS in the sandbox's datastore cluster, with a storage policy,
// two tags, a custom attribute, notes, a second disk and a second NIC, all
// of which vcsim then has; the plan refuses conflicting and malformed
// settings, and a datastore cluster and a storage policy vCenter does not
// have; a tag, the attribute and the notes changed in vCenter outside
// Terraform plan an in-place update that restores them; each change plans
// as the docs say (tags, custom attributes and the annotation in place,
// the rest a replacement), and the in-place ones apply to the same VM.
func TestAccNode_site(t *testing.T) {
	sb := acctest.RequireSandbox(t, "the sandbox's datastore cluster, tags and custom attribute")
	site := sb.VSphere.Site
	image := acctest.Name("img")
	node := acctest.NodeName("site")
	const addr = "windows_node.n0"
	dvpg := dvPortgroupID(t, sb.VSphere)
	tag0, tag1 := site.TagIDs[0], site.TagIDs[1]
	key := site.CustomAttributeKey

	// The storage policy vCenter was asked to apply, from the clone
	// request itself (vcsim keeps no PBM association).
	var mu sync.Mutex
	var requested []string
	sb.VSphere.OnClone(func(_ *simulator.VirtualMachine, req *types.CloneVM_Task) error {
		if req.Name != node || req.Spec.Config == nil {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		for _, p := range req.Spec.Config.VmProfile {
			if d, ok := p.(*types.VirtualMachineDefinedProfileSpec); ok {
				requested = append(requested, d.ProfileId)
			}
		}
		for _, d := range req.Spec.Location.Disk {
			for _, p := range d.Profile {
				if d, ok := p.(*types.VirtualMachineDefinedProfileSpec); ok {
					requested = append(requested, d.ProfileId)
				}
			}
		}
		return nil
	})

	body := func(tags []string, attrs map[string]string, annotation string, diskGB int, nicNet, pod, policy string) string {
		b := fmt.Sprintf("  storage_policy_id = %q\n  disk = [{ size_gb = %d }]\n  network_interface = [{ network_id = %q }]\n",
			policy, diskGB, nicNet)
		if pod != "" {
			b += fmt.Sprintf("  datastore_cluster_id = %q\n", pod)
		}
		if tags != nil {
			b += fmt.Sprintf("  tags = %s\n", hclList(tags))
		}
		if attrs != nil {
			b += "  custom_attributes = {\n"
			for k, v := range attrs {
				b += fmt.Sprintf("    %q = %q\n", k, v)
			}
			b += "  }\n"
		}
		if annotation != "" {
			b += fmt.Sprintf("  annotation = %q\n", annotation)
		}
		return b
	}
	first := body([]string{tag0, tag1}, map[string]string{key: "worker"}, "storage-nic node", 20, dvpg, site.DatastoreClusterID, vcsim.StoragePolicyID)
	plans := func(b string, action plancheck.ResourceActionType) resource.TestStep {
		return resource.TestStep{Config: acctest.NodeConfig(image, []string{node}, b), PlanOnly: true, ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, action)}}}
	}
	var vmID string
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNodesDestroyed(t),
		Steps: []resource.TestStep{
			// Refused at plan, before anything is built.
			{
				Config:      acctest.NodeConfig(image, []string{node}, first+fmt.Sprintf("  datastore_id = %q\n", sb.VSphere.DatastoreID)),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`Attribute "datastore_id" cannot be specified when "datastore_cluster_id" is\s+specified`),
			},
			{
				Config: acctest.NodeConfig(image, []string{node},
					body([]string{"windows"}, map[string]string{"k8s-role": "worker"}, "", 20, dvpg, site.DatastoreClusterID, vcsim.StoragePolicyID)),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)must be a vSphere tag id.*must be a custom attribute's id`),
			},
			// vCenter has neither the datastore cluster nor the storage
			// policy: refused at plan, naming each attribute.
			{
				Config: acctest.NodeConfig(image, []string{node},
					body([]string{tag0, tag1}, map[string]string{key: "worker"}, "storage-nic node", 20, dvpg, "group-p999", "0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0")),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)(Datastore cluster not found.*group-p999.*Storage policy not found|Storage policy not found.*Datastore cluster not found.*group-p999)`),
			},
			{
				Config: acctest.NodeConfig(image, []string{node}, first),
				Check: func(s *terraform.State) error {
					vmID = s.RootModule().Resources[addr].Primary.ID
					if err := acctest.CheckNodeReady(t, node); err != nil {
						return err
					}
					mu.Lock()
					got := slices.Clone(requested)
					mu.Unlock()
					if len(got) < 2 || slices.ContainsFunc(got, func(id string) bool { return id != vcsim.StoragePolicyID }) {
						return fmt.Errorf("the clone asked for storage policies %v, want %s on the VM's home and its disks", got, vcsim.StoragePolicyID)
					}
					return checkSiteVM(t, vmID, site, dvpg, []string{tag0, tag1}, "worker", "storage-nic node")
				},
			},
			// Changed outside Terraform (one tag detached, the custom
			// attribute and the notes edited in vCenter): the refresh reads
			// them back, the plan updates the node in place, and the apply
			// restores them on the same VM.
			{
				PreConfig: func() {
					c := acctest.VSphere(t)
					vm := vsphere.VMRef(vmID)
					had := vsphere.Metadata{Tags: []string{tag1}, CustomAttributes: map[string]string{key: "worker"}}
					if err := c.SetMetadata(context.Background(), vm, had, vsphere.Metadata{CustomAttributes: map[string]string{key: "edited"}}); err != nil {
						t.Fatal(err)
					}
					if err := c.SetAnnotation(context.Background(), vm, "edited in vCenter"); err != nil {
						t.Fatal(err)
					}
				},
				Config: acctest.NodeConfig(image, []string{node}, first),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: func(s *terraform.State) error {
					if id := s.RootModule().Resources[addr].Primary.ID; id != vmID {
						return fmt.Errorf("the VM was replaced (%s, was %s)", id, vmID)
					}
					return checkSiteVM(t, vmID, site, dvpg, []string{tag0, tag1}, "worker", "storage-nic node")
				},
			},
			// What each create-only change does, planned only (each
			// attribute's plan is unit-tested too: TestReplacePaths); the
			// in-place ones are applied below.
			plans(body([]string{tag0, tag1}, map[string]string{key: "worker"}, "storage-nic node", 30, dvpg, site.DatastoreClusterID, vcsim.StoragePolicyID), plancheck.ResourceActionReplace),
			plans(body([]string{tag0, tag1}, map[string]string{key: "worker"}, "storage-nic node", 20, sb.VSphere.NetworkID, site.DatastoreClusterID, vcsim.StoragePolicyID), plancheck.ResourceActionReplace),
			// (The sandbox has one datastore cluster: leaving it replaces
			// too; a datastore cluster vCenter lacks is refused above.)
			plans(body([]string{tag0, tag1}, map[string]string{key: "worker"}, "storage-nic node", 20, dvpg, "", vcsim.StoragePolicyID), plancheck.ResourceActionReplace),
			plans(body([]string{tag0, tag1}, map[string]string{key: "worker"}, "storage-nic node", 20, dvpg, site.DatastoreClusterID, "4d5f673c-536f-11e6-beb8-9e71128cae77"), plancheck.ResourceActionReplace),
			// The in-place changes, applied: one tag detached, the
			// attribute cleared, the provider's own notes back.
			{
				Config: acctest.NodeConfig(image, []string{node}, body([]string{tag1}, nil, "", 20, dvpg, site.DatastoreClusterID, vcsim.StoragePolicyID)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: func(s *terraform.State) error {
					if id := s.RootModule().Resources[addr].Primary.ID; id != vmID {
						return fmt.Errorf("the VM was replaced (%s, was %s)", id, vmID)
					}
					return checkSiteVM(t, vmID, site, dvpg, []string{tag1}, "", "Kubernetes Windows node "+node+" (terraform-provider-windows)")
				},
			},
		},
	})
}

// checkSiteVM reads the node's VM in vcsim: on the datastore cluster's
// datastore, a second disk of 20 GiB, a second NIC on dvpg, the tags, the
// custom attribute's value and the notes.
func checkSiteVM(t *testing.T, vmID string, site vcsim.Site, dvpg string, tags []string, value, annotation string) error {
	t.Helper()
	c := acctest.VSphere(t)
	ctx := context.Background()
	var vm mo.VirtualMachine
	if err := property.DefaultCollector(c.Client.Client).RetrieveOne(ctx, vsphere.VMRef(vmID),
		[]string{"datastore", "network", "customValue", "config.annotation", "config.hardware.device"}, &vm); err != nil {
		return err
	}
	if !slices.ContainsFunc(vm.Datastore, func(r types.ManagedObjectReference) bool { return r.Value == site.PooledDatastoreID }) {
		return fmt.Errorf("the VM is on %v, want the datastore cluster's %s", vm.Datastore, site.PooledDatastoreID)
	}
	if len(vm.Network) != 2 || !slices.ContainsFunc(vm.Network, func(r types.ManagedObjectReference) bool { return r.Value == dvpg }) {
		return fmt.Errorf("the VM's networks are %v, want the template's and %s", vm.Network, dvpg)
	}
	info := acctest.ReadVM(t, vmID)
	if len(info.Disks) != 2 || info.Disks[1].SizeGB() != 20 {
		return fmt.Errorf("the VM's disks are %+v, want the template's and one of 20 GiB", info.Disks)
	}
	got, err := c.AttachedTags(ctx, vsphere.VMRef(vmID))
	if err != nil {
		return err
	}
	if want := slices.Sorted(slices.Values(tags)); !slices.Equal(got, want) {
		return fmt.Errorf("the VM's tags are %v, want %v", got, want)
	}
	key, _ := strconv.Atoi(site.CustomAttributeKey)
	var have string
	for _, cv := range vm.CustomValue {
		if s, ok := cv.(*types.CustomFieldStringValue); ok && s.Key == int32(key) {
			have = s.Value
		}
	}
	if have != value {
		return fmt.Errorf("custom attribute %s = %q, want %q", site.CustomAttributeKey, have, value)
	}
	if vm.Config.Annotation != annotation {
		return fmt.Errorf("the VM's notes are %q, want %q", vm.Config.Annotation, annotation)
	}
	return nil
}

// dvPortgroupID is the id of the sandbox's distributed port group
// DC0_DVPG0, on which the provider's account may put a NIC.
func dvPortgroupID(t *testing.T, s *vcsim.Server) string {
	t.Helper()
	c := acctest.VSphere(t)
	ref, err := object.NewSearchIndex(c.Client.Client).FindByInventoryPath(context.Background(), "/"+s.Datacenter+"/network/DC0_DVPG0")
	if err != nil || ref == nil {
		t.Fatalf("finding DC0_DVPG0: %v", err)
	}
	return ref.Reference().Value
}

func hclList(items []string) string {
	out := "["
	for i, s := range items {
		if i > 0 {
			out += ", "
		}
		out += strconv.Quote(s)
	}
	return out + "]"
}

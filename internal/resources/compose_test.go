package resources_test

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/mo"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// TestAccCompose_vSphereProviderForms feeds windows_golden_image and
// windows_node every form hashicorp/vsphere's data sources and resources
// hand out for the objects they take, computed from the sandbox the way its
// source computes them (acctest.Peer): a composed configuration passes
// data.vsphere_*.* straight through.
//
//	image: source_template = data.vsphere_virtual_machine.base.id (the BIOS
//	       UUID), folder = vsphere_folder.x.path (relative to the pool's
//	       datacenter), resource_pool_id = data.vsphere_compute_cluster.c.resource_pool_id,
//	       datastore_id = data.vsphere_datastore.ds.id,
//	       network_id = data.vsphere_network.dvpg.id ("dvportgroup-N")
//	node:  template = data.vsphere_virtual_machine.golden.instance_uuid (the
//	       image read back by moid), folder = data.vsphere_folder.f.id,
//	       resource_pool_id = data.vsphere_resource_pool.p.id,
//	       host_id = data.vsphere_host.h.id,
//	       network_id = data.vsphere_network.vm.id ("network-N")
//
// (Absolute paths and managed object ids are what every other test uses.)
// A value in none of the forms fails the plan, naming the attribute and
// listing the forms.
func TestAccCompose_vSphereProviderForms(t *testing.T) {
	acctest.PreCheck(t)
	peer := acctest.Peer(t)
	base := acctest.PeerVMByName(t, "templates/win2022-base")
	image := acctest.Name("img")
	// Relative to the datacenter's VM folder, inside the golden images'
	// folder: the provider's user may create folders only where its role
	// is (windows-golden-images holds Folder.Create, propagated).
	relFolder := fmt.Sprintf("%s/compose-%d", path.Base(acctest.GoldenFolder), acctest.Seq())
	node := fmt.Sprintf("cmp-%d", acctest.Seq()%100000)
	imageConfig := acctest.NetworkingConfig("kube-system", "flannel", "  allow_destroy_with_nodes = true\n") +
		acctest.GoldenImageConfig(image, map[string]string{
			"source_template":  fmt.Sprintf("%q", base.ID),
			"folder":           fmt.Sprintf("%q", relFolder),
			"resource_pool_id": fmt.Sprintf("%q", peer.ClusterResourcePoolID),
			"datastore_id":     fmt.Sprintf("%q", peer.DatastoreID),
			"network_id":       fmt.Sprintf("%q", peer.DVPortgroupID),
		})
	// template is an expression: the golden template's forms are known once
	// the image exists, and reach the configuration as a variable.
	nodeConfig := func(template, resourcePool string) string {
		return imageConfig + fmt.Sprintf(`
variable "golden_template" {
  type    = string
  default = ""
}

resource "windows_node" "n0" {
  name              = %q
  template          = %s
  folder            = %q
  resource_pool_id  = %q
  host_id           = %q
  network_id        = %q
  networking_id     = windows_node_networking.test.id
  admin_password_wo = var.admin_password
%s}
`, node, template, peer.FolderID, resourcePool, peer.HostID, peer.NetworkID, acctest.TransportInSandbox())
	}
	var golden acctest.PeerVM

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             resource.ComposeTestCheckFunc(acctest.CheckNodesDestroyed(t), acctest.CheckTemplatesDestroyed(t)),
		Steps: []resource.TestStep{
			{
				// The cluster's own id where its pool belongs, and a bare
				// template name: refused at plan, each naming its attribute,
				// what the value is and the forms accepted.
				Config:   nodeConfig(`"win2022-base"`, peer.ClusterID),
				PlanOnly: true,
				ExpectError: func() *regexp.Regexp {
					pool := `resource_pool_id: "` + peer.ClusterID + `" names no resource pool: it is a cluster's id .*` +
						`data\.vsphere_compute_cluster\.<name>\.resource_pool_id`
					tmpl := `template: "win2022-base" names no virtual machine or template\. Accepted: .*BIOS UUID .*` +
						`data\.vsphere_virtual_machine\.<name>\.id`
					return acctest.Wrapped(`(?s)(` + pool + `.*` + tmpl + `|` + tmpl + `.*` + pool + `)`)
				}(),
			},
			{
				Config: imageConfig,
				Check: func(s *terraform.State) error {
					attrs := s.RootModule().Resources["windows_golden_image.test"].Primary.Attributes
					if want := "/DC0/vm/" + relFolder + "/" + image; attrs["template_path"] != want {
						return fmt.Errorf("template_path = %q, want %q: the relative folder resolves in the pool's datacenter", attrs["template_path"], want)
					}
					golden = acctest.PeerVMByMOID(t, attrs["template_id"])
					return nil
				},
			},
			{
				PreConfig: func() { t.Setenv("TF_VAR_golden_template", golden.InstanceUUID) },
				Config:    nodeConfig("var.golden_template", peer.ResourcePoolID),
				Check: func(s *terraform.State) error {
					if golden.InstanceUUID == "" || golden.InstanceUUID == golden.ID {
						return fmt.Errorf("the golden template's instance UUID %q is not distinct from its BIOS UUID %q", golden.InstanceUUID, golden.ID)
					}
					attrs := s.RootModule().Resources["windows_node.n0"].Primary.Attributes
					if attrs["template"] != golden.InstanceUUID || attrs["ready"] != "true" {
						return fmt.Errorf("template %q, ready %q", attrs["template"], attrs["ready"])
					}
					if err := acctest.CheckNodeReady(t, node); err != nil {
						return err
					}
					ctx := context.Background()
					vc := acctest.VSphere(t)
					var vm mo.VirtualMachine
					if err := property.DefaultCollector(vc.Client.Client).RetrieveOne(ctx, vsphere.VMRef(attrs["id"]),
						[]string{"parent", "resourcePool", "runtime.host", "network"}, &vm); err != nil {
						return err
					}
					if vm.Parent.Value != peer.FolderID || vm.ResourcePool.Value != peer.ResourcePoolID || vm.Runtime.Host.Value != peer.HostID ||
						len(vm.Network) != 1 || vm.Network[0].Value != peer.NetworkID {
						return fmt.Errorf("VM placed in folder %s, pool %s, host %s, networks %v; want %s, %s, %s, [%s]",
							vm.Parent.Value, vm.ResourcePool.Value, vm.Runtime.Host.Value, vm.Network,
							peer.FolderID, peer.ResourcePoolID, peer.HostID, peer.NetworkID)
					}
					return nil
				},
			},
		},
	})
}

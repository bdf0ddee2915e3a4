package resources_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
)

// TestAccNode_flannel: an image with flanneld and a node with cni = "flannel"
// join with flannel's Windows settings (VXLAN VNI 4096, port 4789) and
// flanneld and kube-proxy running as services.
func TestAccNode_flannel(t *testing.T) {
	acctest.PreCheck(t)
	image := acctest.Name("img-fl")
	node := fmt.Sprintf("fl-%d", acctest.Seq())
	a := acctest.Sandbox.Artifacts
	config := strings.Replace(nodeConfig(image, []string{node}, `  cni = "flannel"`),
		"resource \"windows_golden_image\" \"test\" {\n",
		fmt.Sprintf("resource \"windows_golden_image\" \"test\" {\n  flanneld_url = %q\n  flanneld_sha256 = %q\n", a.Flanneld.URL, a.Flanneld.SHA256), 1)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             checkNodesDestroyed(t),
		Steps: []resource.TestStep{{
			Config: config,
			Check: func(*terraform.State) error {
				if _, err := acctest.Kube(t).FindNode(context.Background(), node); err != nil {
					return err
				}
				host := acctest.Sandbox.Hosts.ByName(strings.ToUpper(node))
				if host == nil {
					return fmt.Errorf("no simulated host for %s", node)
				}
				netConf, err := os.ReadFile(host.DiskPath(`C:\etc\kube-flannel\net-conf.json`))
				if err != nil {
					return err
				}
				for _, want := range []string{`"VNI": 4096`, `"Port": 4789`, `"Network": "10.244.0.0/16"`} {
					if !strings.Contains(string(netConf), want) {
						return fmt.Errorf("net-conf.json lacks %s:\n%s", want, netConf)
					}
				}
				if _, err := os.Stat(host.DiskPath(`C:\k\flanneld.exe`)); err != nil {
					return fmt.Errorf("the image did not install flanneld.exe: %v", err)
				}
				for _, svc := range []string{"flanneld", "kube-proxy", "kubelet"} {
					s, ok := host.Service(svc)
					if !ok || s.Status != "Running" {
						return fmt.Errorf("service %s = %+v, want Running", svc, s)
					}
				}
				return nil
			},
		}},
	})
}

package resources_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/updatepkg"
)

// TestAccProxy_imageAndNode: at a site whose guests reach the artifact
// server and the registries only through its proxy (the sandbox's site
// proxy, winsim.Faults.Egress), an image without proxy fails at its first
// download naming the URL and the proxy setting, and its Windows Update scan
// of the site's WSUS with 0x80072EFD; with proxy set, the image
// builds through the proxy, its Windows Update scan of the site's WSUS going
// through WinHTTP's proxy, and a node joins, containerd pulling the probe's
// image through the proxy its service environment names.
func TestAccProxy_imageAndNode(t *testing.T) {
	acctest.PreCheck(t)
	sb := acctest.RequireSandbox(t, "the site proxy and a proxy-only site")
	image := acctest.Name("img-proxy")
	node := fmt.Sprintf("win-%d", acctest.Seq())
	for _, computer := range []string{acctest.ComputerNameOf(image), node} {
		sb.Hosts.SetFaults(computer, sb.ProxyOnlyFaults())
		t.Cleanup(func() { sb.Hosts.ClearFaults(computer) })
	}
	proxyURL := sb.SiteProxy.URL
	proxy := fmt.Sprintf("{\n    http  = %q\n    https = %q\n  }", proxyURL, proxyURL)
	// The guests know the artifact server by its outside name, which only
	// the proxy resolves.
	outside := func(config string) string {
		return strings.ReplaceAll(config, sb.ArtifactsAddr(), sb.OutsideArtifacts())
	}
	imageWith := func(overrides map[string]string) string { return outside(acctest.GoldenImageConfig(image, overrides)) }
	// The image also asks the site's WSUS (the sandbox's update service, by
	// its outside name) for updates: the Windows Update Agent reaches it
	// only through WinHTTP's proxy. No KB it offers is included, so the scan
	// is all this costs.
	catalog := "http://" + sb.OutsideArtifacts() + updatepkg.CatalogPath
	online := fmt.Sprintf("{\n    categories  = [\"Security Updates\"]\n    include_kbs = [\"KB5999999\"]\n    wsus_server = %q\n  }", sb.Artifacts.Updates.ServiceURL)
	withNode := acctest.NetworkingConfig("kube-system", "flannel", "  allow_destroy_with_nodes = true\n") +
		imageWith(map[string]string{"proxy": proxy, "online_updates": online}) + fmt.Sprintf(`
resource "windows_node" "n0" {
  name          = %q
  template      = windows_golden_image.test.template_path
  networking_id = windows_node_networking.test.id
  proxy = {
    http     = %q
    https    = %q
    no_proxy = [".corp.example"]
  }
%s
}
`, node, proxyURL, proxyURL, acctest.MachineInSandbox())
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNodesDestroyed(t),
		Steps: []resource.TestStep{
			{
				// Bad input is refused at plan, naming the attribute.
				Config:      imageWith(map[string]string{"proxy": `{ https = "http://user:secret@proxy.corp.example:3128" }`}),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)proxy\.https.*carries\s+credentials`),
			},
			{
				Config:      imageWith(map[string]string{"proxy": `{ no_proxy = [".corp.example"] }`}),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)At\s+least\s+one\s+attribute\s+out\s+of\s+\[proxy\.https,proxy\.http\]`),
			},
			{
				// No proxy: the first download is dropped, and the error
				// says which and what to set.
				Config: imageWith(nil),
				ExpectError: regexp.MustCompile(`(?s)image step "install-containerd".*downloading\s+http://artifacts\.outside\.test:[0-9]+/\S+\s+without\s+a\s+proxy\s+\(none\s+is\s+set.*proxy\.https` +
					`.*Unable\s+to\s+connect\s+to\s+the\s+remote\s+server`),
			},
			{
				// No proxy, online updates from the WSUS outside: the Windows
				// Update Agent has no WinHTTP proxy and cannot connect.
				Config:      imageWith(map[string]string{"online_updates": online}),
				ExpectError: regexp.MustCompile(`(?s)image step "windows-update-online".*0x80072EFD.*ERROR_WINHTTP_CANNOT_CONNECT.*set\s+proxy`),
			},
			{
				Config: withNode,
				Check: resource.ComposeTestCheckFunc(
					resource.TestCheckResourceAttr("windows_node.n0", "ready", "true"),
					// The user's entry first, then what it missed.
					resource.TestCheckResourceAttr("windows_node.n0", "effective_no_proxy.0", ".corp.example"),
					resource.TestCheckTypeSetElemAttr("windows_node.n0", "effective_no_proxy.*", "10.96.0.0/12"),
					resource.TestCheckTypeSetElemAttr("windows_node.n0", "effective_no_proxy.*", "10.244.0.0/16"),
					func(*terraform.State) error {
						for _, want := range []string{"GET http://" + sb.OutsideArtifacts() + "/", "CONNECT registry.k8s.io:443", "GET " + catalog} {
							if !sb.SiteProxy.Carried(want) {
								return fmt.Errorf("the site proxy carried no %q; it carried %v", want, sb.SiteProxy.Requests())
							}
						}
						host := sb.Hosts.ByName(node)
						if host == nil {
							return fmt.Errorf("no running host %s", node)
						}
						if w := host.WinHTTPProxy(); !strings.Contains(w.Server, strings.TrimPrefix(proxyURL, "http://")) {
							return fmt.Errorf("WinHTTP proxy = %+v, want the site proxy (set by the image)", w)
						}
						env, ok := host.RunningServiceEnv("containerd")
						if !ok {
							return fmt.Errorf("containerd is not running on %s", node)
						}
						noProxy := strings.Split(env["NO_PROXY"], ",")
						if env["HTTPS_PROXY"] != proxyURL || !slices.Contains(noProxy, ".corp.example") || !slices.Contains(noProxy, "10.96.0.0/12") ||
							!slices.Contains(noProxy, host.Config().IP) {
							return fmt.Errorf("containerd's environment: HTTPS_PROXY=%q NO_PROXY=%q; want the site proxy, the user's entry, the Service CIDR and the node's address", env["HTTPS_PROXY"], env["NO_PROXY"])
						}
						kubelet, ok := host.Service("kubelet")
						if !ok || !slices.Contains(kubelet.Environment, "HTTPS_PROXY="+proxyURL) {
							return fmt.Errorf("the kubelet service's Environment = %v, want HTTPS_PROXY=%s", kubelet.Environment, proxyURL)
						}
						return nil
					},
				),
			},
		},
	})
}

package reliability_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
)

// invalidConfig is a configuration the provider must refuse at plan, before
// anything is created: the diagnostic names the attribute (path) and says
// how to fix it (fix).
type invalidConfig struct {
	name   string
	config string // the resource, data source or provider block(s)
	path   string // the attribute as the diagnostic names it (a regexp)
	fix    string // what the diagnostic tells the user to do (a regexp)
}

// TestAccInvalidConfigurations plans each configuration through the real CLI
// and expects it refused, naming the attribute and the fix. Every resource,
// both data sources and the provider block are covered; rows that need the
// sandbox (plan-time checks against vSphere and the cluster) run against
// it, the rest never reach it.
func TestAccInvalidConfigurations(t *testing.T) {
	acctest.PreCheck(t)
	rows := invalidConfigurations()
	if len(rows) < 40 {
		t.Fatalf("%d invalid configurations; the promise is at least 40", len(rows))
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			resource.ParallelTest(t, resource.TestCase{
				PreCheck:                 func() { acctest.PreCheck(t) },
				ProtoV6ProviderFactories: acctest.ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      row.config,
					PlanOnly:    true,
					ExpectError: namesAttributeAndFix(row.path, row.fix),
				}},
			})
		})
	}
}

// namesAttributeAndFix matches a diagnostic that names the attribute and the
// fix, in either order; spaces also match the line breaks Terraform wraps
// diagnostics with.
func namesAttributeAndFix(path, fix string) *regexp.Regexp {
	sp := func(s string) string { return strings.ReplaceAll(s, " ", `\s+`) }
	return regexp.MustCompile(fmt.Sprintf(`(?s)(%s.*%s|%s.*%s)`, sp(path), sp(fix), sp(fix), sp(path)))
}

func invalidConfigurations() []invalidConfig {
	image := acctest.Name("img")
	node := func(name, body string) string { return acctest.NodeConfig(image, []string{name}, body) }
	ok := acctest.NodeName("ok")
	pool := func(prefix string, replicas int, body string) string {
		return acctest.NetworkingConfig("kube-system", "flannel", "") + acctest.GoldenImageConfig(image, nil) + fmt.Sprintf(`
resource "windows_node_pool" "p" {
  name_prefix       = %q
  replicas          = %d
  template          = windows_golden_image.test.template_path
  networking_id     = windows_node_networking.test.id
%s%s
}
`, prefix, replicas, acctest.MachineInSandbox(), body)
	}
	golden := func(overrides map[string]string) string { return acctest.GoldenImageConfig(image, overrides) }
	runtimeClass := func(body string) string {
		return fmt.Sprintf("resource \"windows_runtime_class\" \"test\" {\n  name = \"valid\"\n  %s\n}\n", body)
	}
	guard := func(body string) string {
		return fmt.Sprintf("resource \"windows_linux_daemonset_guard\" \"test\" {\n  %s\n}\n", body)
	}
	networking := func(body string) string {
		return fmt.Sprintf("resource \"windows_node_networking\" \"test\" {\n  %s\n}\n", body)
	}
	cluster := func(body string) string { return fmt.Sprintf("data \"windows_cluster\" \"test\" {\n  %s\n}\n", body) }
	updateStatus := func(body string) string {
		return fmt.Sprintf("data \"windows_update_status\" \"test\" {\n  %s\n}\n", body)
	}
	provider := func(block string) string {
		// The data source reads the cluster at plan, so the provider's
		// Kubernetes settings are used (and refused) then.
		return fmt.Sprintf("provider \"windows\" {\n  %s\n}\n", block) + cluster("")
	}

	return []invalidConfig{
		// windows_node
		{"node name too long", node("abcdefghijklmnopq", ""), `name`, `15 characters`},
		{"node name not a label", node("Win_01", ""), `name`, `DNS-1123`},
		{"node memory not a multiple of 4", node(ok, "  memory_mb = 4095\n"), `memory_mb`, `multiple of 4`},
		{"node no vCPU", node(ok, "  num_cpus = 0\n"), `num_cpus`, `between 1 and 128`},
		{"node label key", node(ok, "  labels = { \"bad key!\" = \"x\" }\n"), `labels`, `Invalid node label key`},
		{"node label value", node(ok, "  labels = { \"example.com/pool\" = \"not a value\" }\n"), `labels\["example.com/pool"\]`, `alphanumeric`},
		{"node taint effect", node(ok, "  taints = [{ key = \"dedicated\", value = \"win\", effect = \"NoRun\" }]\n"), `taints\[0\]\.effect`, `NoSchedule`},
		{"node static IP", node(ok, "  ipv4 = { address = \"10.0.0.300\", prefix_length = 24, gateway = \"10.0.0.1\" }\n"), `ipv4\.address`, `IPv4 address`},
		{"node prefix length", node(ok, "  ipv4 = { address = \"10.0.0.30\", prefix_length = 33, gateway = \"10.0.0.1\" }\n"), `ipv4\.prefix_length`, `between 1 and 32`},
		{"node DNS server", node(ok, "  ipv4 = { address = \"10.0.0.30\", prefix_length = 24, gateway = \"10.0.0.1\", dns_servers = [\"dns.example\"] }\n"), `ipv4\.dns_servers`, `IPv4 address`},
		{"node skip check", node(ok, "  skip_checks = [\"no-such-check\"]\n"), `skip_checks`, `node-cidr-allocation`},
		{"node drain timeout", node(ok, "  drain = { timeout = \"soon\" }\n"), `drain\.timeout`, `Go duration`},
		{"node cluster domain", node(ok, "  cluster_domain = \"Cluster_Local\"\n"), `cluster_domain`, `cluster\.local`},
		{"flannel without networking", acctest.NodeConfigWithout(image, []string{ok}, "  cni = \"flannel\"\n"), `networking_id`, `windows_node_networking`},

		// windows_node_pool
		{"pool prefix too long", pool("toolongprefix", 1, ""), `name_prefix`, `15 characters of a Windows computer name`},
		{"pool prefix starts with a digit", pool("9lives", 1, ""), `name_prefix`, `must start with a letter`},
		{"pool prefix upper case", pool("Win", 1, ""), `name_prefix`, `DNS-1123 label`},
		{"pool replicas", pool("win", -1, ""), `replicas`, `between 0 and 1000`},
		{"pool cannot roll", pool("win", 1, "  max_surge = 0\n  max_unavailable = 0\n"), `max_surge`, `Set max_surge to 1 or more`},
		{"pool parallelism", pool("win", 1, "  max_parallel = 0\n"), `max_parallel`, `between 1 and 100`},
		{"pool unhealthy duration", pool("win", 1, "  replace_unhealthy_after = \"soon\"\n"), `replace_unhealthy_after`, `positive Go duration`},
		{"pool failure domain", pool("win", 1, "  failure_domains = [{ name = \"Rack A\" }]\n"), `failure_domains`, `DNS-1123 label`},
		{"pool memory", pool("win", 1, "  memory_mb = 4095\n"), `memory_mb`, `multiple of 4`},

		// windows_golden_image
		{"image name and prefix", golden(map[string]string{"name_prefix": `"win-"`}), `name_prefix`, `name`},
		{"image kubelet checksum", golden(map[string]string{"kubelet_sha256": `"abc"`}), `kubelet_sha256`, `64 hexadecimal`},
		{"image Kubernetes version", golden(map[string]string{"kubernetes_version": `"1.36"`}), `kubernetes_version`, `v1\.36\.3`},
		{"image mirror URL", golden(map[string]string{"artifacts_base_url": `"ftp://mirror.example/k8s"`}), `artifacts_base_url`, `https?://`},
		{"image containerd URL", golden(map[string]string{"containerd_url": `"containerd.tar.gz"`}), `containerd_url`, `https?://`},
		{"image flanneld without checksum", golden(map[string]string{"network_artifacts": `{ flannel = { flanneld = { url = "https://example.com/flanneld.exe" }, cni_plugin = { url = "https://example.com/f.tgz", sha256 = "` +
			strings.Repeat("a", 64) + `" } } }`}), `network_artifacts`, `sha256`},
		{"image executable path", golden(map[string]string{"additional_executables": `[{ url = "https://example.com/wins.exe", sha256 = "` +
			strings.Repeat("a", 64) + `", destination = "wins.exe" }]`}), `additional_executables\[0\]\.destination`, `C:\\k\\tool\.exe`},
		{"image skip check", golden(map[string]string{"skip_checks": `["dns"]`}), `skip_checks`, `version-skew`},
		{"image source missing", golden(map[string]string{"source_template": `"/DC0/vm/no-such-template"`}), `source_template`, `template`},

		// windows_runtime_class
		{"runtime class build and version", runtimeClass("windows_build = \"10.0.20348\"\n  windows_version = \"2022\""), `windows_build`, `windows_version`},
		{"runtime class neither", runtimeClass(""), `windows_version`, `windows_build`},
		{"runtime class malformed build", runtimeClass(`windows_build = "2022"`), `windows_build`, `10\.0\.<build>`},
		{"runtime class build with UBR", runtimeClass(`windows_build = "10.0.20348.2340"`), `windows_build`, `10\.0\.<build>`},
		{"runtime class unknown version", runtimeClass(`windows_version = "2016"`), `windows_version`, `2019, 2022, 2025`},
		{"runtime class name", "resource \"windows_runtime_class\" \"test\" {\n  name = \"Not_Valid\"\n  windows_version = \"2022\"\n}\n", `name`, `lowercase`},
		{"runtime class selector value", runtimeClass("windows_version = \"2022\"\n  node_selector = { \"example.com/pool\" = \"not a value\" }"), `node_selector\["example.com/pool"\]`, `alphanumeric`},
		{"runtime class selector key", runtimeClass("windows_version = \"2022\"\n  node_selector = { \"bad key!\" = \"x\" }"), `node_selector`, `Invalid Kubernetes label key`},
		{"runtime class Exists with value", runtimeClass("windows_version = \"2022\"\n  tolerations = [{ key = \"os\", operator = \"Exists\", value = \"windows\" }]"), `tolerations\[0\]\.value`, `operator = "Exists"`},
		{"runtime class Equal without key", runtimeClass("windows_version = \"2022\"\n  tolerations = [{ value = \"windows\" }]"), `tolerations\[0\]\.key`, `without a key`},
		{"runtime class seconds", runtimeClass("windows_version = \"2022\"\n  tolerations = [{ key = \"os\", value = \"windows\", effect = \"NoSchedule\", toleration_seconds = 5 }]"), `tolerations\[0\]\.toleration_seconds`, `NoExecute`},
		{"runtime class overhead", runtimeClass("windows_version = \"2022\"\n  overhead = { cpu = \"lots\" }"), `overhead\.cpu`, `quantity`},
		{"runtime class negative overhead", runtimeClass("windows_version = \"2022\"\n  overhead = { memory = \"-128Mi\" }"), `overhead\.memory`, `negative`},
		{"runtime class arch", runtimeClass("windows_version = \"2022\"\n  arch = \"x86\""), `arch`, `amd64`},

		// windows_linux_daemonset_guard
		{"guard without names", guard("namespace = \"kube-system\"\n  names = []"), `names`, `at least 1`},
		{"guard name", guard("namespace = \"kube-system\"\n  names = [\"Kube_Proxy\"]"), `names`, `lowercase`},
		{"guard namespace", guard(`namespace = "Kube System"`), `namespace`, `DNS-1123 label`},

		// windows_node_networking
		{"networking CNI", networking(`cni = "weave"`), `cni`, `flannel`},
		{"networking namespace", networking("cni = \"flannel\"\n  namespace = \"Kube System\""), `namespace`, `DNS-1123 label`},
		{"networking API server", networking("cni = \"flannel\"\n  api_server = \"10.0.0.1:6443\""), `api_server`, `https://`},
		{"networking cluster CIDR", networking("cni = \"flannel\"\n  cluster_cidr = \"10.244.0.0\""), `cluster_cidr`, `CIDR`},

		// data.windows_cluster
		{"cluster version", cluster(`kubernetes_version = "1.36"`), `kubernetes_version`, `v1\.36\.3`},
		{"cluster build", cluster(`windows_build = "2022"`), `windows_build`, `10\.0\.<build>`},
		{"cluster check", cluster(`skip_checks = ["dns"]`), `skip_checks`, `node-cidr-allocation`},
		{"cluster check object", cluster(`skip_checks = ["linux-daemonset:"]`), `skip_checks`, `after the colon`},
		// data.windows_update_status
		{"update status image form", updateStatus(`image = "datastore-12"`), `image`, `Accepted: an absolute inventory path`},
		{"update status image missing", updateStatus(`image = "/DC0/vm/templates/no-such-image"`), `image`, `template_id`},
		{"update status not a golden image", updateStatus(fmt.Sprintf("image = %q", os.Getenv("SANDBOX_TEMPLATE_2022"))), `image`, `Compare against the template_id of a windows_golden_image`},
		{"update status folder missing", updateStatus(fmt.Sprintf("image = %q\n  folder = \"/DC0/vm/no-such-folder\"", "/DC0/vm/templates/win2022-base")), `folder`, `omit folder`},

		// the provider block
		{"provider Kubernetes endpoint", provider(`kubernetes { host = "https://127.0.0.1:1" }`), `kubernetes\.host`, `cannot reach`},
		{"provider vCenter over http", provider(`vsphere { server = "http://vcenter.example" }`), `vsphere\.server`, `allow_unencrypted_http = true`},
		{"provider kubeconfig missing", provider(`kubernetes { config_path = "/nonexistent/kubeconfig" }`), `kubernetes\.config_path`, `existing kubeconfig file`},
	}
}

package acctest

// Fixtures shared by the acceptance test packages: configurations of the
// sandbox's golden image, networking and nodes, and checks that read vSphere
// and the cluster behind Terraform's back.

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// NodeName is a short unique node name (at most 15 characters).
func NodeName(prefix string) string { return fmt.Sprintf("%s-%d", prefix, Seq()) }

// Namespace creates a namespace named Name(prefix) in the sandbox cluster
// for one test, deleted at cleanup, and returns its name.
func Namespace(t *testing.T, prefix string) string {
	t.Helper()
	ns := Name(prefix)
	k := Kube(t)
	if _, err := k.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	return ns
}

// Eventually polls cond until it holds or timeout passes. Tests may poll;
// the provider may not.
func Eventually(timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last error
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		last = err
		return ok, nil
	})
	if err != nil {
		return fmt.Errorf("%s: not within %s (last error: %v)", what, timeout, last)
	}
	return nil
}

// CheckNodesReady is a step check that every Node named is Ready and
// schedulable (CheckNodeReady).
func CheckNodesReady(t *testing.T, names ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for _, n := range names {
			if err := CheckNodeReady(t, n); err != nil {
				return err
			}
		}
		return nil
	}
}

// CheckNodeReady checks that the Node exists, is Ready and schedulable.
func CheckNodeReady(t *testing.T, name string) error {
	n, err := Kube(t).FindNode(context.Background(), name)
	if err != nil {
		return err
	}
	if !kube.NodeIsReady(n) {
		return fmt.Errorf("Node %s is not Ready: %v", name, n.Status.Conditions)
	}
	if n.Spec.Unschedulable {
		return fmt.Errorf("Node %s is still cordoned", name)
	}
	return nil
}

// VMAt returns the id of the VM at NodeFolder/<name>, or "".
func VMAt(t *testing.T, name string) (string, error) {
	ref, err := VSphere(t).FindVMByPath(context.Background(), NodeFolder+"/"+name)
	if vsphere.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return ref.Value, nil
}

// ExpectTracked is a pre-apply plan check after a failed create: state and
// vSphere agree. With tainted, the VM of node name exists, is the one in
// the prior state, which marks it tainted (so the plan replaces it); without,
// there is neither a VM nor a resource in the state.
type ExpectTracked struct {
	T       *testing.T
	Addr    string
	Name    string
	Tainted bool
}

// Wrapped compiles a pattern in which every space also matches the line
// breaks Terraform inserts when it wraps a diagnostic.
func Wrapped(pattern string) *regexp.Regexp {
	return regexp.MustCompile(strings.ReplaceAll(pattern, " ", `\s+`))
}

const GoldenImageAddress = "windows_golden_image.test"

// GoldenImageConfig is a complete image against the sandbox's artifact
// server, built from the stock Windows Server 2022 base template over the
// default transport (vmtools); overrides replace attributes (an empty value
// removes one).
func GoldenImageConfig(name string, overrides map[string]string) string {
	if Sandbox == nil && !LabMode() {
		return "" // no TF_ACC: resource.Test skips the test before using it
	}
	// The artifacts as the sandbox exports them (sandbox.Env), or as the
	// lab sets them.
	q := func(name string) string { return fmt.Sprintf("%q", os.Getenv(name)) }
	attrs := map[string]string{
		"name":                   fmt.Sprintf("%q", name),
		"folder":                 fmt.Sprintf("%q", GoldenFolder),
		"source_template":        fmt.Sprintf("%q", os.Getenv("SANDBOX_TEMPLATE_2022")),
		"resource_pool_id":       fmt.Sprintf("%q", os.Getenv("SANDBOX_RESOURCE_POOL_ID")),
		"datastore_id":           fmt.Sprintf("%q", os.Getenv("SANDBOX_DATASTORE_ID")),
		"network_id":             fmt.Sprintf("%q", os.Getenv("SANDBOX_NETWORK_ID")),
		"admin_password_wo":      "var.admin_password", // TF_VAR_admin_password, from the sandbox
		"kubernetes_version":     q("TF_VAR_kubernetes_version"),
		"artifacts_base_url":     q("TF_VAR_artifacts_base_url"),
		"kubelet_sha256":         q("TF_VAR_kubelet_sha256"),
		"kube_proxy_sha256":      q("TF_VAR_kube_proxy_sha256"),
		"kube_log_runner_sha256": q("TF_VAR_kube_log_runner_sha256"),
		// Every mode's programs, as the sandbox serves them (an HCL object).
		"network_artifacts":  os.Getenv("TF_VAR_network_artifacts"),
		"containerd_url":     q("TF_VAR_containerd_url"),
		"containerd_sha256":  q("TF_VAR_containerd_sha256"),
		"cni_plugins_url":    q("TF_VAR_cni_plugins_url"),
		"cni_plugins_sha256": q("TF_VAR_cni_plugins_sha256"),
	}
	for k, v := range overrides {
		if v == "" {
			delete(attrs, k)
			continue
		}
		attrs[k] = v
	}
	var b strings.Builder
	// The password comes from the environment, so no log of the
	// configuration text holds it.
	b.WriteString("variable \"admin_password\" {\n  type      = string\n  sensitive = true\n}\n\n")
	b.WriteString("resource \"windows_golden_image\" \"test\" {\n")
	for _, k := range sortedKeys(attrs) {
		fmt.Fprintf(&b, "  %s = %s\n", k, attrs[k])
	}
	b.WriteString("}\n")
	return b.String()
}

func ReadVM(t *testing.T, id string) *vsphere.VMInfo {
	t.Helper()
	info, err := VSphere(t).ReadVM(context.Background(), vsphere.VMRef(id))
	if err != nil {
		t.Fatalf("reading %s: %v", id, err)
	}
	return info
}

// VSphere is the tests' own vSphere client: the sandbox's administrator
// (SANDBOX_VSPHERE_ADMIN_USER), whose setup and checks reach past the
// provider's roles; in a lab without one, the provider's user.
func VSphere(t *testing.T) *vsphere.Client {
	t.Helper()
	user, password := os.Getenv("SANDBOX_VSPHERE_ADMIN_USER"), os.Getenv("SANDBOX_VSPHERE_ADMIN_PASSWORD")
	if user == "" {
		user, password = os.Getenv("VSPHERE_USER"), os.Getenv("VSPHERE_PASSWORD")
	}
	c, err := vsphere.NewClient(context.Background(), vsphere.Config{
		Server: os.Getenv("VSPHERE_SERVER"), User: user, Password: password, CAFile: os.Getenv("VSPHERE_CA_FILE"),
		UserAgent: CheckUserAgent,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ComputerNameOf is the Windows computer name the sandbox gives a VM without
// a customization: its name, upper case, at most 15 characters.
func ComputerNameOf(vmName string) string {
	n := strings.ToUpper(regexp.MustCompile(`[^A-Za-z0-9-]`).ReplaceAllString(vmName, "-"))
	if len(n) > 15 {
		n = n[:15]
	}
	return n
}

func CheckTemplatesDestroyed(t *testing.T) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		c := VSphere(t)
		for _, rs := range s.RootModule().Resources {
			if rs.Type != "windows_golden_image" {
				continue
			}
			if _, err := c.FindVMByID(context.Background(), rs.Primary.ID); !vsphere.IsNotFound(err) {
				return fmt.Errorf("golden image %s (%s) still exists (err %v)", rs.Primary.Attributes["name"], rs.Primary.ID, err)
			}
		}
		return nil
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// NetworkingConfig is windows_node_networking in ns, applied as its docs
// say, with an administrator's identity: it carries the admin provider
// configuration (AdminProvider), which other install-once resources of the
// same configuration select too (`provider = windows.admin`).
func NetworkingConfig(ns, cni, extra string) string {
	return AdminProvider() + fmt.Sprintf(`
resource "windows_node_networking" "test" {
  provider  = windows.admin
  cni       = %q
  namespace = %q
%s}
`, cni, ns, extra)
}

// NoBootstrapToken checks that no bootstrap token for a node is left: the
// join credential is deleted after a failed join too.
type NoBootstrapToken struct {
	T    *testing.T
	Node string
}

// NodeConfig is a golden image, the flannel windows_node_networking of
// kube-system, and nodes cloned from the image that reference it; body adds
// attributes to every node. Nodes need a network plugin to turn Ready (the
// kubelet reports NetworkReady only once a CNI configuration and its
// plugins are on the host), and the sandbox cluster has no other.
// allow_destroy_with_nodes: a Windows Node another test left behind must not
// block this test's destroy.
func NodeConfig(image string, nodes []string, body string) string {
	return NetworkingConfig("kube-system", "flannel", "  allow_destroy_with_nodes = true\n") +
		NodeConfigWithout(image, nodes, "  networking_id = windows_node_networking.test.id\n"+body)
}

// NodeConfigWithout is NodeConfig without the networking resource.
func NodeConfigWithout(image string, nodes []string, body string) string {
	var b strings.Builder
	b.WriteString(GoldenImageConfig(image, nil))
	for i, n := range nodes {
		fmt.Fprintf(&b, `
resource "windows_node" "n%d" {
  name              = %q
  template          = windows_golden_image.test.template_path
%s%s
}
`, i, n, MachineInSandbox(), body)
	}
	return b.String()
}

func CheckNodesDestroyed(t *testing.T) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		for _, rs := range s.RootModule().Resources {
			if rs.Type != "windows_node" {
				continue
			}
			if _, err := Kube(t).FindNode(context.Background(), rs.Primary.Attributes["name"]); !kube.IsNotFound(err) {
				return fmt.Errorf("Node %s still exists (err %v)", rs.Primary.Attributes["name"], err)
			}
			if _, err := VSphere(t).FindVMByID(context.Background(), rs.Primary.ID); !vsphere.IsNotFound(err) {
				return fmt.Errorf("VM %s of node %s still exists (err %v)", rs.Primary.ID, rs.Primary.Attributes["name"], err)
			}
		}
		return CheckTemplatesDestroyed(t)(s)
	}
}

func (e ExpectTracked) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	vmID, err := VMAt(e.T, e.Name)
	if err != nil {
		resp.Error = err
		return
	}
	var stateID string
	var tainted bool
	if ps := req.Plan.PriorState; ps != nil && ps.Values != nil && ps.Values.RootModule != nil {
		for _, r := range ps.Values.RootModule.Resources {
			if r.Address == e.Addr {
				stateID, _ = r.AttributeValues["id"].(string)
				tainted = r.Tainted
			}
		}
	}
	switch {
	case !e.Tainted && (vmID != "" || stateID != ""):
		resp.Error = fmt.Errorf("after the failure: VM %q in vSphere, %q in the state; want neither", vmID, stateID)
	case e.Tainted && (vmID == "" || vmID != stateID):
		resp.Error = fmt.Errorf("after the failure: VM %q in vSphere but %q in the state; want the same VM in both", vmID, stateID)
	case e.Tainted && !tainted:
		resp.Error = fmt.Errorf("%s (VM %s) is in the state but not tainted", e.Addr, stateID)
	}
}

func (c NoBootstrapToken) CheckPlan(ctx context.Context, _ plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	secrets, err := Kube(c.T).CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{FieldSelector: "type=bootstrap.kubernetes.io/token"})
	if err != nil {
		resp.Error = err
		return
	}
	for _, s := range secrets.Items {
		if strings.Contains(string(s.Data["description"]), c.Node) {
			resp.Error = fmt.Errorf("the bootstrap token %s of %s outlived the failed join", s.Name, c.Node)
		}
	}
}

// MachineInSandbox is the body of a windows_node or windows_node_pool
// placed in the sandbox (its folder, cluster pool and network), with the
// administrator password of TF_VAR_admin_password and the default
// transport (vmtools).
func MachineInSandbox() string {
	return fmt.Sprintf(`  folder            = %q
  resource_pool_id  = %q
  network_id        = %q
  admin_password_wo = var.admin_password
%s`, NodeFolder, os.Getenv("SANDBOX_RESOURCE_POOL_ID"), os.Getenv("SANDBOX_NETWORK_ID"), TransportInSandbox())
}

// TransportInSandbox is the transport attribute of a machine in the
// sandbox: none, the provider's default (vmtools), which is what a stock
// template reached from anywhere allows.
func TransportInSandbox() string { return "" }

// WinRMOverHTTP is a transport attribute value for WinRM over the HTTP
// listener a stock Windows Server has: NTLM, every message encrypted with
// its session. The runner must be in the guest's subnet (the default).
func WinRMOverHTTP() string {
	return fmt.Sprintf(`{
    type  = "winrm"
    https = false
    port  = %s
  }`, os.Getenv("SANDBOX_WINRM_PORT"))
}

// WinRMOverHTTPSPrepared is a transport attribute value for WinRM over the
// HTTPS listener of a clone of the prepared template
// (SANDBOX_TEMPLATE_2022_PREPARED), verified against the sandbox's CA.
// Without a server name the certificate, made for the template's name,
// fails verification for the clone's address.
func WinRMOverHTTPSPrepared(serverName string) string {
	name := ""
	if serverName != "" {
		name = fmt.Sprintf("\n    tls_server_name = %q", serverName)
	}
	return fmt.Sprintf(`{
    type           = "winrm"
    port           = %s
    ca_certificate = file(%q)%s
  }`, os.Getenv("SANDBOX_WINRM_HTTPS_PORT"), os.Getenv("SANDBOX_CA_FILE"), name)
}

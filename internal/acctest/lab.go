package acctest

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox"
)

// LabEnv turns on lab mode: with TF_ACC=1 and TF_ACC_LAB=1, Main starts no
// sandbox and the tests run against the vCenter and cluster the environment
// names (LabVars), as a real lab sets them or as `go run ./cmd/sandbox
// --env-file` writes them for a sandbox started separately.
const LabEnv = "TF_ACC_LAB"

// LabMode reports whether the acceptance tests run against a lab named by
// the environment instead of an in-process sandbox.
func LabMode() bool { return os.Getenv("TF_ACC") != "" && os.Getenv(LabEnv) == "1" }

// LabVar is a variable lab mode reads, and what it is in a real lab.
type LabVar struct {
	Name     string
	Required bool
	Lab      string
}

// LabVars are the variables lab mode reads: the names the sandbox exports
// (sandbox.Env), SANDBOX_* ones included, plus the folders the tests create
// in. README.md's "Running the acceptance tests against your lab" has this
// table.
var LabVars = []LabVar{
	{"VSPHERE_SERVER", true, "vCenter host name"},
	{"VSPHERE_USER", true, "the provider's vSphere user (the least-privilege role)"},
	{"VSPHERE_PASSWORD", true, "its password"},
	{"VSPHERE_CA_FILE", false, "CA bundle of vCenter's certificate (empty: the system roots)"},
	{"KUBECONFIG", true, "the provider's kubeconfig: its ServiceAccount bound by examples/rbac"},
	{"SANDBOX_ADMIN_KUBECONFIG", true, "a cluster-admin kubeconfig, for the tests' checks and clean-ups"},
	{"SANDBOX_VSPHERE_ADMIN_USER", false, "a vCenter user for the tests' own setup and checks (empty: VSPHERE_USER)"},
	{"SANDBOX_VSPHERE_ADMIN_PASSWORD", false, "its password"},
	{"SANDBOX_TEMPLATE_2022", true, "inventory path of a stock Windows Server 2022 template"},
	{"SANDBOX_RESOURCE_POOL_ID", true, "managed object id of the resource pool to clone into (resgroup-N)"},
	{"SANDBOX_DATASTORE_ID", true, "managed object id of the datastore (datastore-N)"},
	{"SANDBOX_NETWORK_ID", true, "managed object id of the VMs' network (network-N or dvportgroup-N)"},
	{"SANDBOX_ADMIN_PASSWORD", true, "the Administrator password of the template (same as TF_VAR_admin_password)"},
	{"TF_VAR_admin_password", true, "the same password, for the configurations' variable"},
	{"TF_VAR_kubernetes_version", true, "Kubernetes version of the nodes (the cluster's)"},
	{"TF_VAR_artifacts_base_url", true, "artifact mirror with kubelet, kube-proxy, kube-log-runner of that version"},
	{"TF_VAR_kubelet_sha256", true, "sha256 of kubelet.exe on the mirror"},
	{"TF_VAR_kube_proxy_sha256", true, "sha256 of kube-proxy.exe"},
	{"TF_VAR_kube_log_runner_sha256", true, "sha256 of kube-log-runner.exe"},
	{"TF_VAR_containerd_url", true, "containerd Windows archive URL"},
	{"TF_VAR_containerd_sha256", true, "its sha256"},
	{"TF_VAR_cni_plugins_url", true, "CNI plugins Windows archive URL"},
	{"TF_VAR_cni_plugins_sha256", true, "its sha256"},
	{"TF_VAR_network_artifacts", true, "the networking modes' programs on the mirror, as HCL: { flannel = { flanneld = { url = \"...\", sha256 = \"...\" }, cni_plugin = { ... } } }"},
	{"TF_ACC_LAB_NODE_FOLDER", false, "VM folder of the test nodes (default " + defaultNodeFolder + ")"},
	{"TF_ACC_LAB_GOLDEN_FOLDER", false, "VM folder of the test golden images (default " + defaultGoldenFolder + ")"},
}

const (
	defaultNodeFolder   = "/DC0/vm/windows"
	defaultGoldenFolder = "/DC0/vm/golden"
)

// NodeFolder is where NodeConfig puts the VMs: TF_ACC_LAB_NODE_FOLDER, else
// the sandbox's /DC0/vm/windows.
var NodeFolder = envOr("TF_ACC_LAB_NODE_FOLDER", defaultNodeFolder)

// GoldenFolder is where GoldenImageConfig puts the templates:
// TF_ACC_LAB_GOLDEN_FOLDER, else the sandbox's /DC0/vm/golden.
var GoldenFolder = envOr("TF_ACC_LAB_GOLDEN_FOLDER", defaultGoldenFolder)

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// missingLabVars lists the required LabVars that are unset.
func missingLabVars() []string {
	var missing []string
	for _, v := range LabVars {
		if v.Required && os.Getenv(v.Name) == "" {
			missing = append(missing, v.Name)
		}
	}
	return missing
}

// runInLab runs the tests against the lab the environment names: no
// sandbox, Sandbox stays nil, tests that need one skip (RequireSandbox).
func runInLab(m *testing.M) int {
	if missing := missingLabVars(); len(missing) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %s=1 but the lab's environment lacks %s (README.md, \"Running the acceptance tests against your lab\")\n",
			LabEnv, strings.Join(missing, ", "))
		return 1
	}
	fmt.Fprintf(os.Stderr, "lab mode: vCenter %s, nodes in %s, golden images in %s; no sandbox (tests that need one skip)\n",
		os.Getenv("VSPHERE_SERVER"), NodeFolder, GoldenFolder)
	return m.Run()
}

// sandboxOnly is why every test of this package needs the sandbox
// (MainSandboxOnly); empty when the package has tests a lab runs.
var sandboxOnly string

// MainSandboxOnly is Main for a package whose every test needs the sandbox
// (fault injection, simulated hosts): in lab mode each skips, through
// PreCheck, saying why.
func MainSandboxOnly(m *testing.M, why string) {
	sandboxOnly = why
	Main(m)
}

// RequireSandbox skips the test in lab mode, saying why (what of the
// sandbox it needs: simulated hosts' faults and files, vcsim's call
// counters or model, the sandbox's PKI, control plane restarts), and
// otherwise returns the running sandbox, as PreCheck requires it.
func RequireSandbox(t *testing.T, why string) *sandbox.Sandbox {
	t.Helper()
	if LabMode() {
		t.Skipf("needs the in-process sandbox (%s): skipped in lab mode (%s=1)", why, LabEnv)
	}
	PreCheck(t)
	return Sandbox
}

// AdminKubeconfig is the cluster-admin kubeconfig: the tests' checks, and
// the identity of the install-once resources (AdminProvider).
func AdminKubeconfig() string { return adminKubeconfig() }

// adminKubeconfig is the cluster-admin kubeconfig of the tests' checks.
func adminKubeconfig() string {
	if Sandbox != nil {
		return Sandbox.Kubeconfig
	}
	return os.Getenv("SANDBOX_ADMIN_KUBECONFIG")
}

package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/vcsim"
)

func TestWriteEnvFileRoundTripsThroughShell(t *testing.T) {
	s := &Sandbox{
		Dir: "/tmp/dir with space", CAFile: "/tmp/ca.crt", Kubeconfig: "/tmp/kubeconfig", ProviderKubeconfig: "/tmp/provider.kubeconfig",
		AdminPassword: `it's "quoted" $HOME \ !`,
		VSphere: &vcsim.Server{
			Server: "127.0.0.1:1234", User: "administrator@vsphere.local", Password: "p'w",
			ProviderUser: "terraform-provider-windows@vsphere.local", ProviderPassword: "pr'w",
			Templates:      map[string]string{"2019": "/DC0/vm/templates/win2019-base", "2022": "/DC0/vm/templates/win2022-base", "2025": "/DC0/vm/templates/win2025-base", vcsim.PreparedVersion: "/DC0/vm/templates/win2022-prep"},
			ResourcePoolID: "resgroup-1", DatastoreID: "datastore-2", NetworkID: "network-3", Folder: "/DC0/vm/windows", GoldenFolder: "/DC0/vm/golden",
			Site: vcsim.Site{DatastoreClusterID: "group-p4", TagIDs: []string{"urn:vmomi:InventoryServiceTag:11111111-1111-1111-1111-111111111111:GLOBAL"},
				CustomAttributeKey: "0"},
		},
	}
	path := filepath.Join(t.TempDir(), "sandbox.env")
	if err := s.WriteEnvFile(path); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("env file mode = %v, want 0600", st.Mode().Perm())
	}
	for _, e := range s.Env() {
		out, err := exec.Command("bash", "-c", `source "$1" && printf %s "${!2}"`, "bash", path, e.Name).CombinedOutput()
		if err != nil {
			t.Fatalf("sourcing env file: %v: %s", err, out)
		}
		if string(out) != e.Value {
			t.Errorf("%s = %q after sourcing, want %q", e.Name, out, e.Value)
		}
		if e.Value == "" {
			t.Errorf("%s is empty", e.Name)
		}
	}
	names := map[string]bool{}
	for _, kv := range s.Environ() {
		names[strings.SplitN(kv, "=", 2)[0]] = true
	}
	for _, want := range []string{
		"VSPHERE_SERVER", "VSPHERE_USER", "VSPHERE_PASSWORD", "VSPHERE_CA_FILE", "KUBECONFIG",
		"SANDBOX_DIR", "SANDBOX_CA_FILE", "SANDBOX_ADMIN_KUBECONFIG", "SANDBOX_VSPHERE_ADMIN_USER", "SANDBOX_VSPHERE_ADMIN_PASSWORD", "SANDBOX_TEMPLATE_2019", "SANDBOX_TEMPLATE_2022", "SANDBOX_TEMPLATE_2025", "SANDBOX_TEMPLATE_2022_PREPARED", "SANDBOX_ADMIN_PASSWORD",
		"SANDBOX_RESOURCE_POOL_ID", "SANDBOX_DATASTORE_ID", "SANDBOX_NETWORK_ID", "SANDBOX_FOLDER",
		"SANDBOX_DATASTORE_CLUSTER_ID", "SANDBOX_STORAGE_POLICY_ID", "SANDBOX_TAG_IDS", "SANDBOX_CUSTOM_ATTRIBUTE_ID",
	} {
		if !names[want] {
			t.Errorf("Env lacks %s", want)
		}
	}
}

package acctest

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/wincluster/terraform-provider-windows/examples/rbac"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox"
)

// AdminProviderAlias is the alias of the provider configuration that
// applies what a cluster installs once (rbac.InstallOnceResources) with an
// administrator's identity, as the guide "Least privilege" documents;
// configurations select it with `provider = windows.admin`.
const AdminProviderAlias = "admin"

// AdminProvider is the provider configuration of AdminProviderAlias: the
// admin kubeconfig (the sandbox's, or in lab mode SANDBOX_ADMIN_KUBECONFIG),
// and vSphere as the environment sets it. The default configuration keeps
// KUBECONFIG, the everyday identity bound by examples/rbac.
func AdminProvider() string {
	if Sandbox == nil && !LabMode() {
		return "" // no TF_ACC: resource.Test skips the test before using it
	}
	return fmt.Sprintf(`
provider "windows" {
  alias = %q
  kubernetes {
    config_path = %q
  }
}
`, AdminProviderAlias, adminKubeconfig())
}

// KubeconfigWithout issues a kubeconfig for a ServiceAccount bound like the
// provider's, by the documented manifest, minus verb on resource of
// apiGroup: what a cluster whose admin left one rule out gives the provider.
func KubeconfigWithout(t *testing.T, name, apiGroup, resource, verb string) string {
	t.Helper()
	RequireSandbox(t, "a ServiceAccount kubeconfig signed by the sandbox")
	ctx := context.Background()
	objs, err := sandbox.ProviderRBAC()
	if err != nil {
		t.Fatal(err)
	}
	objs = sandbox.RenameIdentity(objs, name)
	if !sandbox.WithoutVerb(objs, apiGroup, resource, verb) {
		t.Fatalf("the documented role grants no %q on %q (group %q)", verb, resource, apiGroup)
	}
	if err := sandbox.ApplyRBAC(ctx, Sandbox.ControlPlane.Client, objs); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := Sandbox.WriteServiceAccountKubeconfig(ctx, rbac.Namespace, name, path); err != nil {
		t.Fatal(err)
	}
	return path
}

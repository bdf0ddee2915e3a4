package resources_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
	corev1 "k8s.io/api/core/v1"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
)

// These tests speak the plugin protocol to the provider (acctest.Protocol)
// because the CLIs here predate what they test: Terraform 1.11.4 and
// OpenTofu 1.12 send no identity; import by identity needs Terraform 1.12.
// They make the calls Terraform makes for `import { identity = {...} }`:
// ImportResourceState with the identity, then ReadResource.

// checkImportByIdentity imports a resource by its import ID and by its
// identity, each followed by a Read as the CLI runs them. Both must yield
// the same state and the identity want; a later refresh must keep both,
// whether the CLI sends the stored identity (Terraform 1.12+) or none
// (older CLIs, which must keep working).
func checkImportByIdentity(t *testing.T, p *acctest.Protocol, typ, importID string, identity map[string]any) acctest.Imported {
	t.Helper()
	idType := p.IdentityType(typ)
	want := tftypes.NewValue(idType, acctest.Object(idType, identity))

	byID := p.Import(typ, importID, nil)
	if e := acctest.Errors(byID.Diagnostics); e != "" {
		t.Fatalf("importing %s by ID %q: %s", typ, importID, e)
	}
	if byID.State.IsNull() {
		t.Fatalf("importing %s by ID %q: the Read after the import found nothing", typ, importID)
	}
	if !byID.Identity.Equal(want) {
		t.Fatalf("importing %s by ID %q: identity %s, want %s", typ, importID, byID.Identity, want)
	}

	byIdentity := p.Import(typ, "", acctest.Object(idType, identity))
	if e := acctest.Errors(byIdentity.Diagnostics); e != "" {
		t.Fatalf("importing %s by identity %v: %s", typ, identity, e)
	}
	if !byIdentity.State.Equal(byID.State) {
		t.Fatalf("importing %s by identity %v: the state differs from an import by ID %q:\n%s", typ, identity, importID, diff(byID.State, byIdentity.State))
	}
	if !byIdentity.Identity.Equal(want) {
		t.Fatalf("importing %s by identity: identity %s, want %s", typ, byIdentity.Identity, want)
	}

	again := p.Read(typ, byIdentity.State, byIdentity.Private, &byIdentity.Identity)
	if e := acctest.Errors(again.Diagnostics); e != "" {
		t.Fatalf("refreshing %s with its identity: %s", typ, e)
	}
	if !again.Identity.Equal(want) || !again.State.Equal(byIdentity.State) {
		t.Fatalf("refreshing %s with its identity changed it: identity %s, state:\n%s", typ, again.Identity, diff(byIdentity.State, again.State))
	}
	old := p.Read(typ, byIdentity.State, byIdentity.Private, nil)
	if e := acctest.Errors(old.Diagnostics); e != "" {
		t.Fatalf("refreshing %s as a CLI without identities: %s", typ, e)
	}
	if !old.Identity.Equal(want) {
		t.Fatalf("refreshing %s as a CLI without identities: identity %s, want %s", typ, old.Identity, want)
	}
	return byID
}

// diff lists the attribute paths where two states differ.
func diff(a, b tftypes.Value) string {
	diffs, err := a.Diff(b)
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, d := range diffs {
		if d.Value1 != nil && d.Value2 != nil && d.Value1.Type().Is(tftypes.String) {
			out = append(out, fmt.Sprintf("  %s: %s -> %s", d.Path, d.Value1, d.Value2))
		}
	}
	if len(out) == 0 {
		for _, d := range diffs {
			out = append(out, "  "+d.Path.String())
		}
	}
	return strings.Join(out, "\n")
}

// checkGoneWithoutIdentity refreshes a resource whose object was deleted,
// as a CLI without identities: the resource leaves the state with no error
// (a Read must return the identity even then, or the framework fails it).
func checkGoneWithoutIdentity(t *testing.T, p *acctest.Protocol, typ string, imported acctest.Imported) {
	t.Helper()
	gone := p.Read(typ, imported.State, imported.Private, nil)
	if e := acctest.Errors(gone.Diagnostics); e != "" {
		t.Fatalf("refreshing a deleted %s: %s", typ, e)
	}
	if !gone.State.IsNull() {
		t.Fatalf("refreshing a deleted %s kept it in the state", typ)
	}
}

func TestAccIdentity_runtimeClass(t *testing.T) {
	acctest.PreCheck(t)
	ctx := context.Background()
	k := acctest.Kube(t)
	name := acctest.Name("win-ident")
	_, err := k.CreateRuntimeClass(ctx, kube.RuntimeClassSpec{
		Name: name, Handler: "runhcs-wcow-process",
		NodeSelector: map[string]string{"kubernetes.io/os": "windows", "kubernetes.io/arch": "amd64", "node.kubernetes.io/windows-build": "10.0.20348"},
		Tolerations:  []corev1.Toleration{osWindowsToleration},
		Overhead:     corev1.ResourceList{corev1.ResourceCPU: k8sresource.MustParse("0.1")},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.DeleteRuntimeClass(context.Background(), name) })

	p := acctest.NewProtocol(t)
	imported := checkImportByIdentity(t, p, "windows_runtime_class", name, map[string]any{"name": name})
	if got := acctest.Attr(imported.State, "windows_build"); got != "10.0.20348" {
		t.Errorf("imported windows_build %q, want 10.0.20348", got)
	}

	bad := p.Import("windows_runtime_class", "", acctest.Object(p.IdentityType("windows_runtime_class"), nil))
	if e := acctest.Errors(bad.Diagnostics); !strings.Contains(e, "identity has no name") {
		t.Errorf("import by an identity without a name: errors %q, want one naming the missing name", e)
	}

	if err := k.DeleteRuntimeClass(ctx, name); err != nil {
		t.Fatal(err)
	}
	checkGoneWithoutIdentity(t, p, "windows_runtime_class", imported)
}

func TestAccIdentity_goldenImage(t *testing.T) {
	acctest.PreCheck(t)
	// Any template imports (what it records is read, the rest is null): the
	// sandbox's base template spares a build.
	template := os.Getenv("SANDBOX_TEMPLATE_2022")
	ref, err := acctest.VSphere(t).FindVMByPath(context.Background(), template)
	if err != nil {
		t.Fatal(err)
	}
	p := acctest.NewProtocol(t)
	imported := checkImportByIdentity(t, p, "windows_golden_image", template, map[string]any{"id": ref.Value})
	if got := acctest.Attr(imported.State, "template_path"); got != template {
		t.Errorf("template_path %q, want %q", got, template)
	}
	byMOID := p.Import("windows_golden_image", ref.Value, nil)
	if e := acctest.Errors(byMOID.Diagnostics); e != "" || !byMOID.State.Equal(imported.State) {
		t.Errorf("import by managed object id %s: errors %q, state:\n%s", ref.Value, e, diff(imported.State, byMOID.State))
	}
}

func TestAccIdentity_nodeNetworking(t *testing.T) {
	acctest.PreCheck(t)
	ns := createNamespace(t, acctest.Kube(t), "ident-net")
	p := acctest.NewProtocol(t)
	imported := checkImportByIdentity(t, p, "windows_node_networking", ns, map[string]any{"namespace": ns})
	if got := acctest.Attr(imported.State, "cni"); got != "none" {
		t.Errorf("cni %q, want none (the namespace holds no agents)", got)
	}
}

func TestAccIdentity_linuxDaemonSetGuard(t *testing.T) {
	acctest.PreCheck(t)
	k := acctest.Kube(t)
	ns := createNamespace(t, k, "ident-guard")
	createDaemonSet(t, k, ns, "kube-proxy", corev1.PodSpec{})
	createDaemonSet(t, k, ns, "node-exporter", corev1.PodSpec{})
	p := acctest.NewProtocol(t)
	// Named DaemonSets (the identity lists them sorted, as the ID does)...
	named := checkImportByIdentity(t, p, "windows_linux_daemonset_guard", ns+"/node-exporter,kube-proxy",
		map[string]any{"namespace": ns, "names": []string{"kube-proxy", "node-exporter"}})
	if got := acctest.Attr(named.State, "id"); got != ns+"/kube-proxy,node-exporter" {
		t.Errorf("id %q, want the sorted import ID", got)
	}
	// ...and the whole namespace: no names.
	checkImportByIdentity(t, p, "windows_linux_daemonset_guard", ns, map[string]any{"namespace": ns})
}

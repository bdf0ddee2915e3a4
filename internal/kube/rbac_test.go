package kube_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/wincluster/terraform-provider-windows/examples/rbac"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox"
)

// TestBootstrapTokenForbidden: with the documented role, the provider's
// ServiceAccount creates and deletes a bootstrap token; with that role minus
// `create` on Secrets, the create fails with an error naming the verb, the
// resource, the namespace and the manifest that grants it.
func TestBootstrapTokenForbidden(t *testing.T) {
	s, _ := cluster(t)
	ctx := t.Context()

	provider, err := kube.NewClient(ctx, kube.Config{ConfigPaths: []string{s.ProviderKubeconfig}})
	if err != nil {
		t.Fatal(err)
	}
	if _, id, err := provider.CreateBootstrapToken(ctx, time.Minute, "rbac test"); err != nil {
		t.Fatalf("with the documented role: %v", err)
	} else if err := provider.DeleteBootstrapToken(ctx, id); err != nil {
		t.Fatalf("with the documented role: %v", err)
	}

	objs, err := sandbox.ProviderRBAC()
	if err != nil {
		t.Fatal(err)
	}
	const name = "tpw-no-secret-create"
	objs = sandbox.RenameIdentity(objs, name)
	if !sandbox.WithoutVerb(objs, "", "secrets", "create") {
		t.Fatal("the documented role grants no create on secrets")
	}
	if err := sandbox.ApplyRBAC(ctx, s.ControlPlane.Client, objs); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := s.WriteServiceAccountKubeconfig(ctx, rbac.Namespace, name, path); err != nil {
		t.Fatal(err)
	}
	lacking, err := kube.NewClient(ctx, kube.Config{ConfigPaths: []string{path}})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = lacking.CreateBootstrapToken(ctx, time.Minute, "rbac test")
	if !apierrors.IsForbidden(err) {
		t.Fatalf("without create on secrets: %v, want Forbidden", err)
	}
	for _, want := range []string{
		`User "system:serviceaccount:terraform-provider-windows:` + name + `"`,
		`cannot create resource "secrets"`, `in the namespace "kube-system"`, kube.RBACManifest,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q:\n%v", want, err)
		}
	}
}

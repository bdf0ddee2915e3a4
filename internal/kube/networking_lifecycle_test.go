package kube_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/networking"
)

// TestNetworkingInstallReadRemoveImport runs windows_node_networking's
// lifecycle as the resource calls it, against the real control plane:
// install reports every owned object and agent; an import of the namespace
// finds the mode and the image its agents run; remove is refused while a
// Windows Node exists (naming it), done with allowWithNodes; a read after
// it reports every object missing.
func TestNetworkingInstallReadRemoveImport(t *testing.T) {
	_, c := cluster(t)
	ctx := t.Context()
	ns := "netcycle"
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	spec := kube.NetworkingSpec{Namespace: ns, Mode: "flannel", APIServer: c.Host(), HostProcessImage: "registry.example/hpc:v1",
		ClusterCIDR: "10.244.0.0/16", ServiceCIDR: "10.96.0.0/12"}
	res, err := c.InstallNetworking(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	flannel, _ := networking.Get("flannel")
	if len(res.Drift) != 0 || len(res.Objects) == 0 || len(res.Agents) != len(flannel.Agents()) {
		t.Fatalf("install: %+v; want objects, no drift and one status per agent of %v", res, flannel.Agents())
	}
	for _, a := range flannel.Agents() {
		if s := res.Agents[a.Name]; s == "" || s == "missing" {
			t.Errorf("agent %s: status %q right after install", a.Name, s)
		}
	}

	imp, err := c.ImportNetworking(ctx, ns)
	if err != nil {
		t.Fatal(err)
	}
	if imp.Mode.Name() != "flannel" || imp.HostProcessImage != spec.HostProcessImage {
		t.Errorf("import: mode %s, image %s; want flannel, %s", imp.Mode.Name(), imp.HostProcessImage, spec.HostProcessImage)
	}

	node := "netcycle-win-0"
	if _, err := c.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node, Labels: map[string]string{kube.LabelOS: "windows"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.CoreV1().Nodes().Delete(context.WithoutCancel(ctx), node, metav1.DeleteOptions{}) })
	err = c.RemoveNetworking(ctx, ns, "flannel", false)
	var depend *kube.WindowsNodesDependError
	if !errors.As(err, &depend) || !slices.Contains(depend.Nodes, node) {
		t.Fatalf("remove with a Windows node: %v; want a WindowsNodesDependError naming %s", err, node)
	}
	if err := c.RemoveNetworking(ctx, ns, "flannel", true); err != nil {
		t.Fatal(err)
	}
	res, err = c.ReadNetworking(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Drift) != len(res.Objects) {
		t.Errorf("read after remove: drift %v, want every one of %v missing", res.Drift, res.Objects)
	}
	for name, s := range res.Agents {
		if s != "missing" {
			t.Errorf("agent %s after remove: %q, want missing", name, s)
		}
	}
	if imp, err := c.ImportNetworking(ctx, ns); err != nil || imp.Mode.Name() != networking.Default().Name() || imp.HostProcessImage != networking.DefaultHostProcessImage {
		t.Errorf("import after remove: %+v, %v; want the default mode and image", imp, err)
	}
}

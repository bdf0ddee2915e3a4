package resources_test

import (
	"context"
	"fmt"
	"log"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/linuxnode"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/sandboxtest"
)

// TestAccClusterDataSource_calico starts a sandbox whose cluster runs
// Calico (its CRDs in the Kubernetes datastore, a VXLAN pool, strict
// affinity) and reads it through the provider's own role: Calico is
// recognised and passes; a pool turned IP-in-IP only, then strict affinity
// off, then a VNI below 4096 each fail the check, naming the setting.
func TestAccClusterDataSource_calico(t *testing.T) {
	acctest.RequireSandbox(t, "a second sandbox whose cluster runs Calico")
	acctest.PreCheck(t)
	ctx, cancel := context.WithTimeout(context.Background(), secondSandboxTimeout)
	defer cancel()
	sb := sandboxtest.Start(ctx, t, sandbox.Options{CNI: linuxnode.CNICalico, Logf: log.Printf})
	dyn, err := dynamic.NewForConfig(sb.ControlPlane.Config)
	if err != nil {
		t.Fatal(err)
	}
	patch := func(resource, name, spec string) func() {
		return func() {
			_, err := dyn.Resource(linuxnode.CalicoGVR(resource)).Patch(context.Background(), name, types.MergePatchType,
				[]byte(`{"spec": `+spec+`}`), metav1.PatchOptions{})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	config := fmt.Sprintf(`
provider "windows" {
  kubernetes { config_path = %q }
}

data "windows_cluster" "test" {}
`, sb.ProviderKubeconfig)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(clusterAddress, tfjsonpath.New("cni").AtMapKey("name"), knownvalue.StringExact("calico")),
					statecheck.ExpectKnownValue(clusterAddress, tfjsonpath.New("cni").AtMapKey("source"), knownvalue.StringExact("DaemonSet calico-system/calico-node")),
					expectCheck(clusterAddress, "cni", "pass", `IPPool default-ipv4-ippool with vxlanMode Always, IPAMConfig default strictAffinity true, VXLAN VNI 4096 on port 4789`),
				},
			},
			{
				PreConfig: patch("ippools", linuxnode.CalicoPoolName, `{"vxlanMode": "Never", "ipipMode": "Always"}`),
				Config:    config,
				ConfigStateChecks: []statecheck.StateCheck{
					expectCheck(clusterAddress, "cni", "fail", `IP-in-IP \(default-ipv4-ippool \(ipipMode Always\)\).*set ipipMode: Never and vxlanMode: Always`),
				},
			},
			{
				PreConfig: func() {
					patch("ippools", linuxnode.CalicoPoolName, `{"vxlanMode": "Always", "ipipMode": "Never"}`)()
					patch("ipamconfigs", "default", `{"strictAffinity": false}`)()
				},
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					expectCheck(clusterAddress, "cni", "fail", `IPAMConfig default: strictAffinity is false.*"strictAffinity": true`),
				},
			},
			{
				PreConfig: func() {
					patch("ipamconfigs", "default", `{"strictAffinity": true}`)()
					patch("felixconfigurations", "default", `{"vxlanVNI": 1}`)()
				},
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					expectCheck(clusterAddress, "cni", "fail", `vxlanVNI is 1: Calico for Windows refuses a VNI below 4096`),
				},
			},
		},
	})
}

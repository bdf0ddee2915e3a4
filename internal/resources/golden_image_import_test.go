package resources_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/goldenimage"
	"github.com/wincluster/terraform-provider-windows/internal/remote"
)

// TestAccGoldenImage_importThenManage: a template built outside Terraform is
// adopted with an import block; the plan records the configuration's inputs
// in place (vCenter cannot tell them) instead of rebuilding the template, and
// the next plan is empty.
func TestAccGoldenImage_importThenManage(t *testing.T) {
	acctest.RequireSandbox(t, "a template built outside Terraform over the simulated hosts' WinRM port")
	acctest.PreCheck(t)
	name := acctest.Name("win-adopted")
	path := buildTemplateOutsideTerraform(t, name)
	config := fmt.Sprintf("import {\n  to = windows_golden_image.test\n  id = %q\n}\n\n", path) + acctest.GoldenImageConfig(name, nil)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckTemplatesDestroyed(t),
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(acctest.GoldenImageAddress, plancheck.ResourceActionUpdate),
				}},
			},
			{Config: config, PlanOnly: true},
			{
				// An import block by identity { id } (OpenTofu/Terraform 1.12+)
				// plans the same update in place.
				Config:       acctest.RequiredProviders() + acctest.GoldenImageConfig(name, nil),
				ResourceName: acctest.GoldenImageAddress, ImportState: true, ImportStateKind: resource.ImportBlockWithResourceIdentity,
				SkipFunc:           acctest.SkipWithoutIdentityImport,
				ExpectNonEmptyPlan: true,
				ImportPlanChecks: resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(acctest.GoldenImageAddress, plancheck.ResourceActionUpdate),
				}},
			},
		},
	})
}

// buildTemplateOutsideTerraform builds a golden image with the library
// directly, as another tool (or an earlier Packer pipeline) would have.
func buildTemplateOutsideTerraform(t *testing.T, name string) string {
	t.Helper()
	a := acctest.Sandbox.Artifacts
	vc := acctest.VSphere(t)
	var port int
	if _, err := fmt.Sscan(os.Getenv("SANDBOX_WINRM_PORT"), &port); err != nil {
		t.Fatalf("SANDBOX_WINRM_PORT: %v", err)
	}
	password := os.Getenv("SANDBOX_ADMIN_PASSWORD")
	res, err := goldenimage.Build(context.Background(), goldenimage.NewVSphere(vc), remote.Connect, goldenimage.Request{
		Clone: goldenimage.CloneRequest{Source: os.Getenv("SANDBOX_TEMPLATE_2022"), Name: name, Folder: "/DC0/vm/golden",
			ResourcePoolID: os.Getenv("SANDBOX_RESOURCE_POOL_ID"), DatastoreID: os.Getenv("SANDBOX_DATASTORE_ID"), NetworkID: os.Getenv("SANDBOX_NETWORK_ID")},
		// The stock template's HTTP listener, NTLM with sealed messages.
		Transport: remote.Config{Port: port, NTLM: true, User: "Administrator", Password: password},
		Image: bootstrap.ImageConfig{
			KubernetesVersion: "v1.36.3",
			Containerd:        bootstrap.Artifact{Name: "containerd", URL: a.Containerd.URL, SHA256: a.Containerd.SHA256, Path: bootstrap.DownloadPath(a.Containerd.URL), ExtractTo: bootstrap.ContainerdDir},
			Kubelet:           bootstrap.Artifact{Name: "kubelet", URL: a.Kubelet.URL, SHA256: a.Kubelet.SHA256, Path: bootstrap.KubeletExe},
			KubeProxy:         bootstrap.Artifact{Name: "kube-proxy", URL: a.KubeProxy.URL, SHA256: a.KubeProxy.SHA256, Path: bootstrap.KubeProxyExe},
			KubeLogRunner:     bootstrap.Artifact{Name: "kube-log-runner", URL: a.KubeLogRunner.URL, SHA256: a.KubeLogRunner.SHA256, Path: bootstrap.KubeLogRunnerExe},
			CNIPlugins:        bootstrap.Artifact{Name: "cni-plugins", URL: a.CNIPlugins.URL, SHA256: a.CNIPlugins.SHA256, Path: bootstrap.DownloadPath(a.CNIPlugins.URL), ExtractTo: bootstrap.CNIBinDir},
		},
		Unattend: bootstrap.UnattendConfig{},
	})
	if err != nil {
		t.Fatalf("building %s outside Terraform: %v", name, err)
	}
	return res.Template.Path
}

package provider_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// TestAccProvider_logsOutOfVCenter runs the provider as Terraform runs it,
// a plugin process of its own built from main.go, for a plan that reads
// vSphere (a golden image's base template): once Terraform is done with the
// process, the vCenter session it logged in with is gone, not left for
// vCenter's idle timeout.
func TestAccProvider_logsOutOfVCenter(t *testing.T) {
	acctest.PreCheck(t)
	ctx := t.Context()
	bin := filepath.Join(t.TempDir(), "terraform-provider-windows")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/wincluster/terraform-provider-windows").CombinedOutput(); err != nil {
		t.Fatalf("building the provider: %v\n%s", err, out)
	}
	dir := t.TempDir()
	rc := filepath.Join(dir, "dev.tfrc")
	if err := os.WriteFile(rc, fmt.Appendf(nil, "provider_installation {\n  dev_overrides {\n    %q = %q\n  }\n  direct {}\n}\n",
		"registry.terraform.io/hashicorp/windows", filepath.Dir(bin)), 0o600); err != nil {
		t.Fatal(err)
	}
	config := acctest.RequiredProviders() + acctest.GoldenImageConfig(acctest.Name("logout"), nil)
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}

	vc := acctest.Sandbox.VSphere
	before, err := vc.OpenSessions(ctx, vsphere.UserAgent)
	if err != nil {
		t.Fatal(err)
	}
	logins := vc.CallsBy(vsphere.UserAgent)["RetrievePropertiesEx"]
	cmd := exec.CommandContext(ctx, os.Getenv("TF_ACC_TERRAFORM_PATH"), "plan", "-no-color", "-input=false", "-lock=false", "-refresh=false")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+rc, "TF_REATTACH_PROVIDERS=", "TF_LOG=", "TF_LOG_PROVIDER=")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "windows_golden_image.test will be created") {
		t.Fatalf("terraform plan: %v\n%s", err, out)
	}
	if vc.CallsBy(vsphere.UserAgent)["RetrievePropertiesEx"] == logins {
		t.Fatalf("the plan made no vSphere call: the test proves nothing\n%s", out)
	}
	after, err := vc.OpenSessions(ctx, vsphere.UserAgent)
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("vCenter holds %d sessions of the provider after the plan, %d before: the plugin process left its session", after, before)
	}
}

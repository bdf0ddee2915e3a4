package resources_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/artifacts"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

func TestAccGoldenImage_basic(t *testing.T) {
	acctest.PreCheck(t)
	name := acctest.Name("win2022-k8s")
	var templatePath string
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckTemplatesDestroyed(t),
		Steps: []resource.TestStep{
			{
				Config: acctest.GoldenImageConfig(name, nil),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(acctest.GoldenImageAddress, tfjsonpath.New("windows_build"), knownvalue.StringExact("10.0.20348")),
					statecheck.ExpectKnownValue(acctest.GoldenImageAddress, tfjsonpath.New("windows_version"), knownvalue.StringExact("2022")),
					statecheck.ExpectKnownValue(acctest.GoldenImageAddress, tfjsonpath.New("windows_build_full"), knownvalue.StringRegexp(regexp.MustCompile(`^10\.0\.20348\.[0-9]+$`))),
					statecheck.ExpectKnownValue(acctest.GoldenImageAddress, tfjsonpath.New("containerd_version"), knownvalue.StringExact(artifacts.ContainerdVersion)),
					statecheck.ExpectKnownValue(acctest.GoldenImageAddress, tfjsonpath.New("template_path"), knownvalue.StringExact(acctest.GoldenFolder+"/"+name)),
					statecheck.ExpectKnownValue(acctest.GoldenImageAddress, tfjsonpath.New("build_vm_id"), knownvalue.StringExact("")),
					statecheck.ExpectKnownValue(acctest.GoldenImageAddress, tfjsonpath.New("manifest"), knownvalue.StringRegexp(regexp.MustCompile(`"name":"kubelet".*"sha256":"`+os.Getenv("TF_VAR_kubelet_sha256")))),
				},
				Check: func(s *terraform.State) error {
					rs := s.RootModule().Resources[acctest.GoldenImageAddress]
					templatePath = rs.Primary.Attributes["template_path"]
					info := acctest.ReadVM(t, rs.Primary.ID)
					if !info.Template {
						return fmt.Errorf("%s is not a template", templatePath)
					}
					if info.CurrentSnapshot == nil {
						return fmt.Errorf("%s has no snapshot for linked clones", templatePath)
					}
					// What the build did on the guest: the files it verified,
					// the services, the reboot for the Containers feature.
					// In lab mode the guest's disk is not readable from here.
					if acctest.Sandbox == nil {
						t.Log("lab mode: the guest's files and script log are not checked (the simulated host's directory)")
						return nil
					}
					host := filepath.Join(acctest.Sandbox.Hosts.Dir, acctest.ComputerNameOf(name))
					for _, f := range []string{`fs/C/k/kubelet.exe`, `fs/C/k/kube-proxy.exe`, `fs/C/Program Files/containerd/bin/containerd.exe`,
						`fs/C/opt/cni/bin/win-overlay.exe`, `fs/C/ProgramData/VMware/VMware Tools/tools.conf`, `fs/C/Windows/System32/Sysprep/unattend.xml`, `fs/C/Windows/Panther/unattend.xml`} {
						if _, err := os.Stat(filepath.Join(host, f)); err != nil {
							return fmt.Errorf("the build did not leave %s: %v", f, err)
						}
					}
					log, err := os.ReadFile(filepath.Join(host, "scripts.log"))
					if err != nil {
						return err
					}
					for _, step := range []string{"containers-feature", "install-kubelet", "containerd-service", "verify", "windows-build", "sysprep"} {
						if !strings.Contains(string(log), "step: "+step) {
							return fmt.Errorf("scripts.log has no step %s", step)
						}
					}
					if strings.Contains(string(log), os.Getenv("SANDBOX_ADMIN_PASSWORD")) {
						return fmt.Errorf("the administrator password appears in the guest's script log")
					}
					// The answer files it left (its own, Setup's cached copy)
					// hold no password: no file of the template's disk does.
					return noPasswordOnDisk(host, os.Getenv("SANDBOX_ADMIN_PASSWORD"))
				},
			},
			{
				ResourceName:            acctest.GoldenImageAddress,
				ImportState:             true,
				ImportStateIdFunc:       func(*terraform.State) (string, error) { return templatePath, nil },
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: goldenImageInputs,
			},
		},
	})
}

// goldenImageInputs are what an import cannot read back from vCenter.
var goldenImageInputs = []string{
	"admin_password_wo", "admin_password_wo_version", "source_template", "resource_pool_id", "datastore_id", "network_id",
	"artifacts_base_url", "kubelet_sha256", "kube_proxy_sha256", "kube_log_runner_sha256", "network_artifacts",
	"containerd_url", "containerd_sha256", "cni_plugins_url",
	"cni_plugins_sha256", "transport", "transport.%", "transport.port", "transport.ca_certificate", "timeouts",
}

// TestAccGoldenImage_disappears deletes the template outside Terraform; the
// refresh notices and the next apply builds it again.
func TestAccGoldenImage_disappears(t *testing.T) {
	acctest.PreCheck(t)
	name := acctest.Name("win-gone")
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckTemplatesDestroyed(t),
		Steps: []resource.TestStep{
			{
				Config: acctest.GoldenImageConfig(name, nil),
				Check: func(s *terraform.State) error {
					return acctest.VSphere(t).Destroy(context.Background(), vsphere.VMRef(s.RootModule().Resources[acctest.GoldenImageAddress].Primary.ID))
				},
				ExpectNonEmptyPlan: true,
			},
			{Config: acctest.GoldenImageConfig(name, nil)},
		},
	})
}

// TestAccGoldenImage_failures: each failure says what failed, and leaves no
// VM behind that Terraform does not know.
func TestAccGoldenImage_failures(t *testing.T) {
	acctest.PreCheck(t)
	cases := map[string]struct {
		overrides map[string]string
		want      string
	}{
		"checksum mismatch": {map[string]string{"kubelet_sha256": fmt.Sprintf("%q", strings.Repeat("0", 64))},
			`(?s)image step "install-kubelet" exited with code 1.*checksum mismatch for kubelet`},
		"unreachable artifact": {map[string]string{"artifacts_base_url": `"http://127.0.0.1:1/release"`},
			`(?s)image step "install-kubelet".*Unable to connect to the remote server`},
		"wrong password": {map[string]string{"admin_password_wo": `"not-the-password"`},
			`(?s)connecting to the build VM.*(auth|credentials|password)`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			vmName := acctest.Name("win-fail")
			resource.Test(t, resource.TestCase{
				PreCheck:                 func() { acctest.PreCheck(t) },
				ProtoV6ProviderFactories: acctest.ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      acctest.GoldenImageConfig(vmName, tc.overrides),
					ExpectError: regexp.MustCompile(tc.want),
				}},
				CheckDestroy: func(*terraform.State) error {
					// The failed build's VM was destroyed: nothing untracked.
					if _, err := acctest.VSphere(t).FindVMByPath(context.Background(), acctest.GoldenFolder+"/"+vmName); !vsphere.IsNotFound(err) {
						return fmt.Errorf("the build VM %s was left behind (err %v)", vmName, err)
					}
					return nil
				},
			})
		})
	}
}

// TestAccGoldenImage_keepBuildVM keeps the failed build VM in the state
// (tainted); destroy removes it.
func TestAccGoldenImage_keepBuildVM(t *testing.T) {
	acctest.PreCheck(t)
	vmName := acctest.Name("win-kept")
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: acctest.GoldenImageConfig(vmName, map[string]string{
					"kubelet_sha256": fmt.Sprintf("%q", strings.Repeat("0", 64)), "keep_build_vm_on_failure": "true",
				}),
				ExpectError: regexp.MustCompile(`(?s)checksum mismatch.*was kept for debugging`),
			},
			{
				// The kept VM is in the state, tainted: the plan replaces it.
				Config:   acctest.GoldenImageConfig(vmName, map[string]string{"kubelet_sha256": fmt.Sprintf("%q", strings.Repeat("0", 64)), "keep_build_vm_on_failure": "true"}),
				PlanOnly: true, ExpectNonEmptyPlan: true,
				Check: func(*terraform.State) error { return nil },
			},
		},
		CheckDestroy: func(*terraform.State) error {
			if _, err := acctest.VSphere(t).FindVMByPath(context.Background(), acctest.GoldenFolder+"/"+vmName); !vsphere.IsNotFound(err) {
				return fmt.Errorf("destroy left the kept build VM %s (err %v)", vmName, err)
			}
			return nil
		},
	})
}

// TestAccGoldenImage_sourceValidation refuses, at plan time, a source that is
// not Windows or not a supported Windows Server release.
func TestAccGoldenImage_sourceValidation(t *testing.T) {
	acctest.RequireSandbox(t, "plain VMs made in the sandbox inventory: /DC0/vm/other on LocalDS_0")
	acctest.PreCheck(t)
	linux := createVM(t, "linux-base", "otherLinux64Guest")
	w2016 := createVM(t, "win2016-base", "windows9Server64Guest")
	for path, want := range map[string]string{
		linux:                       `(?s)runs guest OS "otherLinux64Guest",\s+not Windows`,
		w2016:                       `(?s)"windows9Server64Guest",\s+which\s+Kubernetes\s+does\s+not\s+support`,
		"/DC0/vm/templates/missing": `(?s)Invalid source_template.*not found`,
	} {
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProviderFactories,
			Steps: []resource.TestStep{{
				Config:      acctest.GoldenImageConfig(acctest.Name("win-src"), map[string]string{"source_template": fmt.Sprintf("%q", path)}),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(want),
			}},
		})
	}
}

// TestAccGoldenImage_linkedClonesBlockDelete refuses to delete a template
// whose disks linked clones still use, naming them.
func TestAccGoldenImage_linkedClonesBlockDelete(t *testing.T) {
	acctest.PreCheck(t)
	name := acctest.Name("win-linked")
	var cloneID string
	config := acctest.GoldenImageConfig(name, nil)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckTemplatesDestroyed(t),
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: func(s *terraform.State) error {
					c := acctest.VSphere(t)
					pool, _ := c.FindResourcePoolByID(context.Background(), os.Getenv("SANDBOX_RESOURCE_POOL_ID"))
					folder, _ := c.FindFolderByPath(context.Background(), acctest.GoldenFolder, false)
					vm, err := c.Clone(context.Background(), vsphere.CloneSpec{
						Source: vsphere.VMRef(s.RootModule().Resources[acctest.GoldenImageAddress].Primary.ID), Name: name + "-lc",
						Folder: folder, ResourcePool: pool, LinkedClone: true,
					})
					if err != nil {
						return err
					}
					cloneID = vm.ID()
					return nil
				},
			},
			{
				Config:      config,
				Destroy:     true,
				ExpectError: regexp.MustCompile(`(?s)still has linked clones.*` + regexp.QuoteMeta(name+"-lc")),
			},
			{
				PreConfig: func() {
					if err := acctest.VSphere(t).Destroy(context.Background(), vsphere.VMRef(cloneID)); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
			},
		},
	})
}

// createVM makes a plain VM with a guest OS id in the sandbox inventory.
func createVM(t *testing.T, name, guestID string) string {
	t.Helper()
	c := acctest.VSphere(t)
	ctx := context.Background()
	pool, err := c.FindResourcePoolByID(ctx, os.Getenv("SANDBOX_RESOURCE_POOL_ID"))
	if err != nil {
		t.Fatal(err)
	}
	folderRef, err := c.FindFolderByPath(ctx, "/DC0/vm/other", true)
	if err != nil {
		t.Fatal(err)
	}
	folder := object.NewFolder(c.Client.Client, folderRef)
	task, err := folder.CreateVM(ctx, types.VirtualMachineConfigSpec{
		Name: name, GuestId: guestID, Files: &types.VirtualMachineFileInfo{VmPathName: "[LocalDS_0]"},
	}, object.NewResourcePool(c.Client.Client, pool), nil)
	if err == nil {
		_, err = task.WaitForResult(ctx)
	}
	if err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
	return "/DC0/vm/other/" + name
}

// noPasswordOnDisk fails when any file of a simulated host's disk holds the
// password in any of its encodings. Its controls plant each encoding first
// in C:\Windows\TEMP and in VMware Tools' customization folder
// (C:\Windows\TEMP\vmware-imc, which the node's first step removes): the
// search must find every one.
func noPasswordOnDisk(hostDir, password string) error {
	for _, win := range []string{acctest.GuestTempDir + `\planted-answer.bin`, acctest.GuestCustomizationDir + `\planted-guestcust.log`} {
		planted := acctest.GuestFile(hostDir, win)
		rel, _ := filepath.Rel(hostDir, planted)
		created := ""
		if _, err := os.Stat(filepath.Dir(planted)); os.IsNotExist(err) {
			created = filepath.Dir(planted)
			if err := os.MkdirAll(created, 0o755); err != nil {
				return err
			}
		}
		for i, enc := range acctest.PasswordEncodings(password) {
			if err := os.WriteFile(planted, append([]byte("<Value>"), append(enc, "</Value>"...)...), 0o644); err != nil {
				return err
			}
			found, err := acctest.FilesHoldingPassword(hostDir, password)
			_ = os.Remove(planted)
			if err != nil {
				return err
			}
			if !slices.Contains(found, rel) {
				return fmt.Errorf("the disk search missed a password planted in %s (encoding %d): found %v", win, i, found)
			}
		}
		if created != "" {
			_ = os.Remove(created) // leave the disk as the provider left it
		}
	}
	found, err := acctest.FilesHoldingPassword(hostDir, password)
	if err != nil {
		return err
	}
	if len(found) > 0 {
		return fmt.Errorf("files of %s hold the administrator password: %v", filepath.Base(hostDir), found)
	}
	return nil
}

// hostDir is the disk directory of the simulated host with this computer
// name (NTFS-like: any case).
func hostDir(computer string) string {
	entries, _ := os.ReadDir(acctest.Sandbox.Hosts.Dir)
	for _, e := range entries {
		if e.IsDir() && strings.EqualFold(e.Name(), computer) {
			return filepath.Join(acctest.Sandbox.Hosts.Dir, e.Name())
		}
	}
	return filepath.Join(acctest.Sandbox.Hosts.Dir, computer)
}

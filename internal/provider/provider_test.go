package provider_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
)

func TestMain(m *testing.M) { acctest.Main(m) }

// runtimeClassWith is a configuration whose only resource needs Kubernetes,
// with the given provider block. windows_runtime_class is applied with an
// administrator's identity (its docs say so): the credentials the tests
// configure are an administrator's (adminCertificate, an admin
// ServiceAccount's token, the admin kubeconfig).
func runtimeClassWith(providerBlock, name string) string {
	return fmt.Sprintf(`
provider "windows" {
%s
}

resource "windows_runtime_class" "test" {
  name            = %q
  windows_version = "2022"
}`, providerBlock, name)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAccProvider_kubernetesFields configures the cluster field by field (no
// kubeconfig), as a Terraform Cloud workspace would, with a client
// certificate of an administrator (windows_runtime_class's identity).
func TestAccProvider_kubernetesFields(t *testing.T) {
	acctest.RequireSandbox(t, "the sandbox's PKI (client certificates, the cluster CA's files)")
	acctest.PreCheck(t)
	pki := acctest.Sandbox.PKI
	certPEM, keyPEM := adminCertificate(t)
	t.Setenv("KUBECONFIG", "") // prove the fields alone are enough
	name := acctest.Name("win-fields")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{{
			Config: runtimeClassWith(fmt.Sprintf(`
  kubernetes {
    host                   = %q
    cluster_ca_certificate = %q
    client_certificate     = %q
    client_key             = %q
  }`, acctest.Kube(t).Host(), readFile(t, pki.CAFile), certPEM, keyPEM), name),
			Check: func(*terraform.State) error {
				_, err := acctest.Kube(t).FindRuntimeClass(context.Background(), name)
				return err
			},
		}},
	})
}

// adminCertificate is a client certificate of an administrator (the
// identity windows_runtime_class's docs name), issued by the cluster CA.
func adminCertificate(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	certPEM, keyPEM, err := acctest.Sandbox.IssueAdminCertificate("terraform-provider-windows-admin:" + strings.ToLower(t.Name()))
	if err != nil {
		t.Fatal(err)
	}
	return certPEM, keyPEM
}

// TestAccProvider_vsphereIsLazy: a configuration that only manages Kubernetes
// objects works even when the vSphere settings point nowhere.
func TestAccProvider_vsphereIsLazy(t *testing.T) {
	acctest.PreCheck(t)
	t.Setenv("KUBECONFIG", acctest.AdminKubeconfig())
	t.Setenv("VSPHERE_SERVER", "127.0.0.1:1")
	t.Setenv("VSPHERE_PASSWORD", "wrong")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{{
			Config: runtimeClassWith("", acctest.Name("win-lazy")),
		}},
	})
}

// TestAccProvider_kubernetesErrors: a wrong endpoint, CA or credential gives
// one diagnostic naming the endpoint and the setting to fix.
func TestAccProvider_kubernetesErrors(t *testing.T) {
	acctest.RequireSandbox(t, "the sandbox's PKI (client certificates, the cluster CA's files)")
	acctest.PreCheck(t)
	host := acctest.Kube(t).Host()
	ca := readFile(t, acctest.Sandbox.PKI.CAFile)
	cases := map[string]struct{ block, want string }{
		"unreachable": {`kubernetes { host = "https://127.0.0.1:1" }`,
			`(?s)Cannot connect to Kubernetes.*cannot reach the Kubernetes API server at\s+https://127\.0\.0\.1:1.*kubernetes\.host`},
		"unknown CA": {fmt.Sprintf(`kubernetes {
    host  = %q
    token = "not-a-token"
  }`, host), `(?s)cannot verify the TLS certificate of the Kubernetes API server.*cluster_ca_certificate`},
		"bad token": {fmt.Sprintf(`kubernetes {
    host                   = %q
    cluster_ca_certificate = %q
    token                  = "not-a-token"
  }`, host, ca), `(?s)rejected the\s+credentials`},
		"nothing configured": {`kubernetes {}`, `(?s)no Kubernetes cluster is configured.*KUBECONFIG`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", "")
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      runtimeClassWith(tc.block, acctest.Name("win-err")),
					ExpectError: regexp.MustCompile(tc.want),
				}},
			})
		})
	}
}

func TestAccProvider_badBooleanEnvironment(t *testing.T) {
	acctest.PreCheck(t)
	t.Setenv("KUBECONFIG", acctest.AdminKubeconfig())
	t.Setenv("KUBE_INSECURE", "maybe")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      runtimeClassWith("", acctest.Name("win-env")),
			ExpectError: regexp.MustCompile(`(?s)Invalid environment variable KUBE_INSECURE.*true or false`),
		}},
	})
}

// TestAccProvider_secretsNotLogged runs with TF_LOG=trace and checks that no
// log line, Terraform's or the provider's, contains the configured secrets.
func TestAccProvider_secretsNotLogged(t *testing.T) {
	acctest.RequireSandbox(t, "the sandbox's PKI (client certificates, the cluster CA's files)")
	acctest.PreCheck(t)
	logFile := t.TempDir() + "/trace.log"
	t.Setenv("TF_LOG", "trace")
	t.Setenv("TF_ACC_LOG_PATH", logFile)
	t.Setenv("KUBECONFIG", "")
	const token = "tok3n-that-must-never-be-logged"
	const vspherePassword = "vsphere-passw0rd-never-logged"
	t.Setenv("VSPHERE_PASSWORD", vspherePassword)
	pki := acctest.Sandbox.PKI
	// The secrets come from the environment, as in CI and Terraform Cloud, so
	// that the test framework's own log of the configuration holds none.
	t.Setenv("KUBE_HOST", acctest.Kube(t).Host())
	t.Setenv("KUBE_CLUSTER_CA_CERT_DATA", readFile(t, pki.CAFile))
	t.Setenv("KUBE_TOKEN", token)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      runtimeClassWith("", acctest.Name("win-secret")),
			ExpectError: regexp.MustCompile(`rejected the\s+credentials`),
		}},
	})
	t.Setenv("KUBE_TOKEN", "")
	certPEM, keyPEM := adminCertificate(t)
	t.Setenv("KUBE_CLIENT_CERT_DATA", string(certPEM))
	t.Setenv("KUBE_CLIENT_KEY_DATA", string(keyPEM))
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps:                    []resource.TestStep{{Config: runtimeClassWith("", acctest.Name("win-secret"))}},
	})
	logs := readFile(t, logFile)
	if len(logs) < 1000 {
		t.Fatalf("the trace log has only %d bytes; tracing did not work", len(logs))
	}
	keyBody := regexp.MustCompile(`(?s)-----BEGIN [A-Z ]*PRIVATE KEY-----\n(.{40})`).FindStringSubmatch(string(keyPEM))[1]
	for what, secret := range map[string]string{"token": token, "vSphere password": vspherePassword, "client key": keyBody} {
		if regexp.MustCompile(regexp.QuoteMeta(secret)).MatchString(logs) {
			t.Errorf("the %s appears in the trace log %s", what, logFile)
		}
	}
}

// TestAccProvider_unknownHost: kubernetes.host comes from a resource of the
// same run (terraform_data's output is known only after apply, as a cluster
// module's endpoint would be), while KUBECONFIG and KUBE_HOST point at a
// decoy. The plan must never talk to the decoy: a data source read at plan
// fails naming kubernetes.host (with depends_on it is read at apply, from the
// configured cluster); a new RuntimeClass plans and is created in the real
// cluster once the host is known at apply; a refresh while the host is
// unknown again fails naming it. Destroy still works from there: its
// refresh uses the values in the state, which are known.
func TestAccProvider_unknownHost(t *testing.T) {
	acctest.RequireSandbox(t, "the sandbox's PKI (client certificates, the cluster CA's files)")
	acctest.PreCheck(t)
	d := newDecoy(t)
	pki := acctest.Sandbox.PKI
	certPEM, keyPEM := adminCertificate(t)
	host := acctest.Kube(t).Host()
	name := acctest.Name("win-unknown")
	config := func(endpoint, extra string) string {
		return fmt.Sprintf(`
resource "terraform_data" "cluster" {
  input = %q
}

provider "windows" {
  kubernetes {
    host                   = terraform_data.cluster.output
    cluster_ca_certificate = %q
    client_certificate     = %q
    client_key             = %q
  }
}

resource "windows_runtime_class" "test" {
  name            = %q
  windows_version = "2022"
}
%s`, endpoint, readFile(t, pki.CAFile), certPEM, keyPEM, name, extra)
	}
	unknownHost := func(address string) *regexp.Regexp {
		return regexp.MustCompile(`(?s)Provider configuration unknown until apply.*with ` + regexp.QuoteMeta(address) +
			`.*kubernetes\.host is unknown until\s+apply.*-target`)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			if _, err := acctest.Kube(t).FindRuntimeClass(context.Background(), name); !kube.IsNotFound(err) {
				return fmt.Errorf("RuntimeClass %s after destroy: %v, want it gone", name, err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config:      config(host, `data "windows_cluster" "test" {}`),
				ExpectError: unknownHost("data.windows_cluster.test"),
			},
			{
				// depends_on the resource that provides the setting: the
				// data source is read at apply, from the configured host.
				Config: config(host, `
data "windows_cluster" "test" {
  depends_on = [terraform_data.cluster]
}`),
				Check: resource.ComposeTestCheckFunc(
					func(*terraform.State) error {
						_, err := acctest.Kube(t).FindRuntimeClass(context.Background(), name)
						return err
					},
					resource.TestCheckResourceAttr("data.windows_cluster.test", "api_endpoint", host),
				),
			},
			{
				// A new endpoint (the cluster replaced, say): unknown again.
				Config:      config(host+"/", ""),
				ExpectError: unknownHost("windows_runtime_class.test"),
			},
		},
	})
	d.untouched(t)
}

// TestAccProvider_provisioningUnitsRefusedAtPlan: a host limit no full clone
// fits in is refused before anything runs, naming the attribute and the fix.
func TestAccProvider_provisioningUnitsRefusedAtPlan(t *testing.T) {
	acctest.PreCheck(t)
	t.Setenv("KUBECONFIG", acctest.AdminKubeconfig())
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      runtimeClassWith("  vsphere {\n    provisioning_units_per_host = 3\n  }", acctest.Name("win-units")),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)Invalid provisioning_units_per_host.*fewer units than a full clone takes.*Use 16`),
		}},
	})
}

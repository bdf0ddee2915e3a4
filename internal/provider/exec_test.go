package provider_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
)

// execPlugin builds the test credential plugin (testdata/execplugin) into a
// temporary directory and returns its path.
func execPlugin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "execplugin")
	out, err := exec.Command("go", "build", "-o", bin, "./testdata/execplugin").CombinedOutput()
	if err != nil {
		t.Fatalf("building the credential plugin: %v\n%s", err, out)
	}
	return bin
}

// execEnv is what the test plugin hands out: the token of an admin
// ServiceAccount (from the TokenRequest API),
// valid for ttl as the plugin tells client-go, and a log of its runs.
type execEnv struct {
	TokenFile, Log string
}

func newExecEnv(t *testing.T) execEnv {
	t.Helper()
	// The plugin's resource is windows_runtime_class, which its docs apply
	// with an administrator's identity: a token of an admin ServiceAccount.
	token, err := acctest.RequireSandbox(t, "an admin ServiceAccount token").AdminToken(context.Background(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	e := execEnv{TokenFile: filepath.Join(dir, "token"), Log: filepath.Join(dir, "runs.log")}
	if err := os.WriteFile(e.TokenFile, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	return e
}

// runs are the times the plugin ran.
func (e execEnv) runs(t *testing.T) []time.Time {
	t.Helper()
	b, err := os.ReadFile(e.Log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []time.Time
	for _, line := range strings.Fields(string(b)) {
		at, err := time.Parse(time.RFC3339Nano, line)
		if err != nil {
			t.Fatalf("plugin log %s: %v", e.Log, err)
		}
		out = append(out, at)
	}
	return out
}

// execProviderBlock is a kubernetes block for the sandbox cluster whose credentials
// come from the plugin; extra is written inside the exec block.
func execProviderBlock(t *testing.T, apiVersion, command, extra string) string {
	return fmt.Sprintf(`
  kubernetes {
    host                   = %q
    cluster_ca_certificate = %q
    exec {
      api_version = %q
      command     = %q
%s
    }
  }`, acctest.Kube(t).Host(), readFile(t, acctest.Sandbox.PKI.CAFile), apiVersion, command, extra)
}

// words matches the words of s separated by any white space: Terraform
// wraps diagnostics.
func words(s string) string {
	fields := strings.Fields(s)
	for i, f := range fields {
		fields[i] = regexp.QuoteMeta(f)
	}
	return strings.Join(fields, `\s+`)
}

// TestAccProvider_execExpiresDuringApply: the credentials come from a
// plugin that says they expire after 2 s, and one apply lasts longer: a
// RuntimeClass, then 6 s of local-exec, then another RuntimeClass. client-go
// must run the plugin again for the second one (its credential has expired),
// and the apply succeed. KUBE_TOKEN holds a wrong token: exec wins over it.
// Traced (TF_LOG=trace), no log line holds the plugin's token.
func TestAccProvider_execExpiresDuringApply(t *testing.T) {
	acctest.RequireSandbox(t, "the sandbox's PKI (the cluster CA's file)")
	acctest.PreCheck(t)
	plugin := execPlugin(t)
	e := newExecEnv(t)
	t.Setenv("KUBECONFIG", "")
	t.Setenv("KUBE_TOKEN", "not-a-token")
	logFile := filepath.Join(t.TempDir(), "trace.log")
	t.Setenv("TF_LOG", "trace")
	t.Setenv("TF_ACC_LOG_PATH", logFile)
	marker := filepath.Join(t.TempDir(), "waited")
	first, second := acctest.Name("win-exec-a"), acctest.Name("win-exec-b")
	config := fmt.Sprintf(`
provider "windows" {
%s
}

resource "windows_runtime_class" "first" {
  name            = %q
  windows_version = "2022"
}

resource "terraform_data" "wait" {
  depends_on = [windows_runtime_class.first]
  provisioner "local-exec" {
    command = "sleep 6 && touch %s"
  }
}

resource "windows_runtime_class" "second" {
  depends_on      = [terraform_data.wait]
  name            = %q
  windows_version = "2022"
}`, execProviderBlock(t, "client.authentication.k8s.io/v1", plugin, fmt.Sprintf(`      args        = ["get-token", "--cluster", "sandbox"]
      env = {
        EXEC_PLUGIN_TOKEN_FILE = %q
        EXEC_PLUGIN_TTL        = "2s"
        EXEC_PLUGIN_LOG        = %q
      }`, e.TokenFile, e.Log)), first, marker, second)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{{
			Config: config,
			Check: func(*terraform.State) error {
				for _, name := range []string{first, second} {
					if _, err := acctest.Kube(t).FindRuntimeClass(context.Background(), name); err != nil {
						return fmt.Errorf("RuntimeClass %s: %w", name, err)
					}
				}
				st, err := os.Stat(marker)
				if err != nil {
					return fmt.Errorf("the local-exec wait did not run: %w", err)
				}
				runs := e.runs(t)
				var after int
				for _, at := range runs {
					if at.After(st.ModTime()) {
						after++
					}
				}
				t.Logf("the plugin ran %d times, %d of them after the 6 s wait", len(runs), after)
				if len(runs) < 2 || after == 0 {
					return fmt.Errorf("the plugin ran %d times (%v), none after the wait ended at %s: the expired credential was not renewed",
						len(runs), runs, st.ModTime().Format(time.RFC3339Nano))
				}
				return nil
			},
		}},
	})
	logs := readFile(t, logFile)
	if len(logs) < 1000 {
		t.Fatalf("the trace log has only %d bytes; tracing did not work", len(logs))
	}
	if token := strings.TrimSpace(readFile(t, e.TokenFile)); strings.Contains(logs, token) {
		t.Errorf("the plugin's token appears in the trace log %s", logFile)
	}
}

// TestAccProvider_execFails: a plugin that exits 1 gives a diagnostic naming
// kubernetes.exec with the plugin's own message; a plugin that is not
// installed names kubernetes.exec.command, and a token the API server
// rejects names kubernetes.exec. With a kubeconfig whose user has
// working credentials (the sandbox admin's), exec still decides: it replaces
// them.
func TestAccProvider_execFails(t *testing.T) {
	acctest.RequireSandbox(t, "the sandbox's PKI and admin kubeconfig")
	acctest.PreCheck(t)
	plugin := execPlugin(t)
	e := newExecEnv(t)
	t.Setenv("KUBECONFIG", "")
	const msg = "error: no cached login for profile lab: run aws sso login --profile lab"
	const v1beta1 = "client.authentication.k8s.io/v1beta1"
	badToken := filepath.Join(t.TempDir(), "bad-token")
	if err := os.WriteFile(badToken, []byte("not-a-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct{ block, want string }{
		"exit 1": {execProviderBlock(t, v1beta1, plugin, fmt.Sprintf(`      env = {
        EXEC_PLUGIN_FAIL = %q
        EXEC_PLUGIN_LOG  = %q
      }`, msg, e.Log)),
			`(?s)Cannot connect to Kubernetes.*` + words("kubernetes.exec: the credential plugin") + `.*` + words("failed with exit code 1; its message: "+msg)},
		"kubeconfig user": {fmt.Sprintf(`
  kubernetes {
    config_path = %q
    exec {
      api_version = %q
      command     = %q
      env         = { EXEC_PLUGIN_FAIL = "the plugin decides, not the kubeconfig" }
    }
  }`, acctest.Sandbox.Kubeconfig, v1beta1, plugin),
			`(?s)` + words("its message: the plugin decides, not the kubeconfig")},
		"rejected token": {execProviderBlock(t, v1beta1, plugin, fmt.Sprintf(`      env = {
        EXEC_PLUGIN_TOKEN_FILE = %q
        EXEC_PLUGIN_TTL        = "1m"
      }`, badToken)),
			`(?s)` + words("rejected the credentials of the credential plugin") + `.*` + words("401 Unauthorized): check kubernetes.exec")},
		"not installed": {execProviderBlock(t, v1beta1, "no-such-credential-plugin", ""),
			`(?s)` + words("kubernetes.exec: the credential plugin no-such-credential-plugin is not installed where Terraform runs") + `.*` + words("kubernetes.exec.command")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      runtimeClassWith(tc.block, acctest.Name("win-exec-err")),
					ExpectError: regexp.MustCompile(tc.want),
				}},
			})
		})
	}
	if runs := e.runs(t); len(runs) == 0 {
		t.Errorf("the failing plugin never ran")
	}
}

// TestAccProvider_execValidation: contradictory or unsupported exec settings
// fail at plan, naming the attribute and the fix.
func TestAccProvider_execValidation(t *testing.T) {
	acctest.PreCheck(t)
	cases := map[string]struct{ block, want string }{
		"token and exec": {`kubernetes {
    host  = "https://127.0.0.1:6443"
    token = "abc"
    exec {
      api_version = "client.authentication.k8s.io/v1beta1"
      command     = "aws"
    }
  }`, `(?s)Conflicting Kubernetes credentials.*` + words("remove kubernetes.token to sign in through the credential plugin")},
		"client certificate and exec": {`kubernetes {
    host               = "https://127.0.0.1:6443"
    client_certificate = "pem"
    exec {
      api_version = "client.authentication.k8s.io/v1"
      command     = "kubelogin"
    }
  }`, `(?s)Conflicting Kubernetes credentials.*` + words("kubernetes.exec and kubernetes.client_certificate both")},
		"v1alpha1": {`kubernetes {
    exec {
      api_version = "client.authentication.k8s.io/v1alpha1"
      command     = "aws"
    }
  }`, `(?s)Unsupported kubernetes.exec.api_version.*` + words("client.authentication.k8s.io/v1 or client.authentication.k8s.io/v1beta1") + `.*` + words("removed in Kubernetes 1.24")},
		"empty command": {`kubernetes {
    exec {
      api_version = "client.authentication.k8s.io/v1"
      command     = ""
    }
  }`, `(?s)Missing kubernetes.exec.command.*` + words(`set it to the credential plugin, such as "aws" or "kubelogin"`)},
		"no command": {`kubernetes {
    exec {
      api_version = "client.authentication.k8s.io/v1"
    }
  }`, `(?s)Missing kubernetes.exec.command.*` + words("missing or empty")},
		"no api_version": {`kubernetes {
    exec {
      command = "aws"
    }
  }`, `(?s)Missing kubernetes.exec.api_version.*` + words("client.authentication.k8s.io/v1 or client.authentication.k8s.io/v1beta1")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", "")
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      runtimeClassWith(tc.block, acctest.Name("win-exec-val")),
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(tc.want),
				}},
			})
		})
	}
}

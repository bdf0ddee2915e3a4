package resources_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"unicode/utf16"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// TestAccSecrets_failingSensitiveSteps makes each step that carries a
// secret fail the way Windows PowerShell reports it: the error record's
// position message echoes the failing line, in its 69-character window, and
// the fault puts the error where the secret sits in that line (the worst
// case: a short line holding a secret is shown whole). The node's
// join-files step carries the bootstrap token in the kubeconfig it uploads
// after its script (never in the script's text); the golden image's sysprep step carried the
// administrator password until its answer file lost it
// (bootstrap.Unattend). Everything that leaves the provider — the
// diagnostics, TF_LOG=trace, the state and the plan JSON — is then searched
// for the password, the token and their encodings.
func TestAccSecrets_failingSensitiveSteps(t *testing.T) {
	acctest.RequireSandbox(t, "simulated host faults in the join steps")
	acctest.PreCheck(t)
	logFile := filepath.Join(t.TempDir(), "trace.log")
	t.Setenv("TF_LOG", "trace")
	t.Setenv("TF_ACC_LOG_PATH", logFile)

	password := os.Getenv("SANDBOX_ADMIN_PASSWORD")
	image, node := acctest.Name("img"), acctest.NodeName("sec")

	// The bootstrap kubeconfig (the token) is uploaded once join-files'
	// script has succeeded, never written from inside it (the PowerShell
	// script block log): the fault fails the script at its last file
	// write, so the token never reaches the guest, and the test reads it
	// from the cluster instead (watchJoinToken).
	joinFault := winsim.StepFault{Step: "join-files",
		FailAt: regexp.MustCompile(`(kubelet-config\.yaml)', \[Convert\]::FromBase64String`),
		Stderr: `Exception calling "WriteAllBytes" with "2" argument(s): "Access to the path 'C:\k\kubelet-config.yaml' is denied."`}
	joinToken := watchJoinToken(t, node)

	config := acctest.NodeConfig(image, []string{node}, "  timeouts {\n    create = \"3m\"\n  }\n")
	var diagnostics []string
	expect := []*regexp.Regexp{
		acctest.Wrapped(`(?s)creating Windows node.*join step "join-files" exited with code 1.*Access to the path .* is denied`),
	}
	clear := func() {
		acctest.Sandbox.Hosts.ClearFaults(node)
	}
	t.Cleanup(clear)
	var token string
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNodesDestroyed(t),
		// The diagnostics of the failing applies, whole: ExpectError only
		// matches them.
		ErrorCheck: func(err error) error {
			i := len(diagnostics)
			if i >= len(expect) || !expect[i].MatchString(err.Error()) {
				return err
			}
			diagnostics = append(diagnostics, err.Error())
			return nil
		},
		Steps: []resource.TestStep{
			{
				// The image builds; the node's join-files fails.
				PreConfig: func() {
					acctest.Sandbox.Hosts.SetFaults(node, winsim.Faults{Steps: []winsim.StepFault{joinFault}})
				},
				Config: config,
			},
			{
				// The state and the plan that replaces the failed node.
				PreConfig: func() {
					if len(diagnostics) != len(expect) {
						t.Fatalf("%d of the %d sensitive steps failed", len(diagnostics), len(expect))
					}
					token = joinToken()
					clear()
				},
				Config:             config,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPreRefresh: []plancheck.PlanCheck{
					planJSON{check: func(plan []byte) error {
						if !bytes.Contains(plan, []byte(`"windows_node"`)) || !bytes.Contains(plan, []byte(`"prior_state"`)) {
							return fmt.Errorf("the plan JSON has no prior state with the node")
						}
						return noSecrets("the plan JSON (with the state)", string(plan), password, token)
					}},
				}},
			},
		},
	})
	if t.Failed() {
		return
	}
	for i, d := range diagnostics {
		if err := noSecrets(fmt.Sprintf("diagnostic %d", i+1), d, password, token); err != nil {
			t.Error(err)
		}
		// The failing line's echo is hidden, the rest of the record stays.
		if strings.Contains(d, "invalid result object") {
			t.Errorf("the state saved by the failed create holds unknown values:\n%s", d)
		}
		if !acctest.Wrapped(`line of the step's script not shown`).MatchString(d) || !strings.Contains(d, "FullyQualifiedErrorId") {
			t.Errorf("diagnostic %d does not show the error record with its echo hidden:\n%s", i+1, d)
		}
	}
	logs, err := os.ReadFile(logFile)
	if err != nil || len(logs) < 10000 {
		t.Fatalf("trace log missing or short (%d bytes): %v", len(logs), err)
	}
	if err := noSecrets("the trace log", string(logs), password, token); err != nil {
		t.Error(err)
	}
}

// joinToken reads the bootstrap token of a node's (failed) join from the
// join-files script its host received.
// watchJoinToken watches, from now on, for the bootstrap token windows_node
// creates for node (its Secret's name comes from the node's name,
// kube.BootstrapTokenID) and returns what reads the token it saw: the
// provider deletes it after the failed join, so it is caught as it is made.
func watchJoinToken(t *testing.T, node string) func() string {
	t.Helper()
	name := "bootstrap-token-" + kube.BootstrapTokenID("windows_node "+node)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := acctest.Kube(t).CoreV1().Secrets(metav1.NamespaceSystem).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var token string
	go func() {
		for ev := range w.ResultChan() {
			if sec, ok := ev.Object.(*corev1.Secret); ok && len(sec.Data["token-secret"]) > 0 {
				mu.Lock()
				token = string(sec.Data["token-id"]) + "." + string(sec.Data["token-secret"])
				mu.Unlock()
			}
		}
	}()
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		if token == "" {
			t.Fatalf("no bootstrap token %s was made for %s", name, node)
		}
		return token
	}
}

// noSecrets searches text for the password and the token, raw and encoded
// (standard, URL-safe and UTF-16LE base64, at any alignment), and for any
// 16 characters of the base64 that carried the password in the sysprep
// step; the token's base64 in the kubeconfig literal is among its
// encodings.
func noSecrets(where, text, password, token string) error {
	if password == "" || !regexp.MustCompile(`^[a-z0-9]{6}\.[a-z0-9]{16}$`).MatchString(token) {
		return fmt.Errorf("searching %s: no password or token to search for (token %q)", where, token)
	}
	var needles []string
	for _, s := range []string{password, token, token[strings.IndexByte(token, '.')+1:]} {
		needles = append(needles, s)
		needles = append(needles, encodingsOf(s)...)
	}
	for _, n := range needles {
		if strings.Contains(text, n) {
			i := strings.Index(text, n)
			return fmt.Errorf("%s holds a secret (%d characters: %q…) near %q", where, len(n), n[:4], text[max(0, i-40):i])
		}
	}
	return nil
}

// encodingsOf returns the base64 texts that s leaves inside any longer
// base64 text: the characters that depend on s alone, for the three byte
// alignments, of its standard, URL-safe and UTF-16LE encodings.
func encodingsOf(s string) []string {
	var out []string
	for _, raw := range [][]byte{[]byte(s), utf16le(s)} {
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			for pad := 0; pad < 3; pad++ {
				e := enc.EncodeToString(append(bytes.Repeat([]byte{0}, pad), raw...))
				from, to := (8*pad+5)/6, 8*(pad+len(raw))/6
				if to-from >= 8 {
					out = append(out, e[from:to])
				}
			}
		}
	}
	return out
}

func utf16le(s string) []byte {
	u := utf16.Encode([]rune(s))
	b := make([]byte, 2*len(u))
	for i, c := range u {
		b[2*i], b[2*i+1] = byte(c), byte(c>>8)
	}
	return b
}

// planJSON runs check on the plan as `terraform show -json` writes it.
type planJSON struct{ check func([]byte) error }

// Terraform records the input variables' values in a plan, sensitive ones
// included: the configuration's own copy of the password (TF_VAR_...), not
// the provider's doing, so they are left out. admin_password_wo is
// write-only: neither planned nor stored.
func (c planJSON) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	plan := *req.Plan
	plan.Variables = nil
	b, err := json.Marshal(plan)
	if err != nil {
		resp.Error = err
		return
	}
	resp.Error = c.check(b)
}

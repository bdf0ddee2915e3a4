package resources_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/winnode"
)

// TestAccNode_credentials builds a golden image and joins a node, while
// watching the bootstrap token the provider creates for it, then checks:
//   - the token is scoped to the join: exactly kubeadm's fields, both usages
//     (authentication, signing) and no other, the node bootstrappers' group
//     alone, expiring within winnode.BootstrapTokenTTL, and deleted once the
//     node is Ready;
//   - no credential but the node's own reached a host: every file written
//     under every simulated host's directory (their disks, registries, logs,
//     the image build's VM included) is searched for the cluster admin's
//     client certificate and key, the CA key, the other control-plane keys,
//     the provider's ServiceAccount token and the vSphere password, as
//     written, base64-encoded (any alignment) and UTF-16 (PowerShell 5.1's default encoding).
func TestAccNode_credentials(t *testing.T) {
	acctest.PreCheck(t)
	image := acctest.Name("img")
	node := fmt.Sprintf("win-%d", acctest.Seq())
	tokens := watchBootstrapTokens(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNodesDestroyed(t),
		Steps: []resource.TestStep{{
			Config: acctest.NodeConfig(image, []string{node}, ""),
			Check: resource.ComposeTestCheckFunc(
				func(*terraform.State) error { return tokens.check(node) },
				func(*terraform.State) error { return noAdminCredentialOnHosts(t) },
			),
		}},
	})
}

// tokenWatch records the bootstrap token Secrets created while it runs.
type tokenWatch struct {
	mu      sync.Mutex
	added   []*corev1.Secret
	deleted map[string]bool
}

func watchBootstrapTokens(t *testing.T) *tokenWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := acctest.Kube(t).CoreV1().Secrets("kube-system").Watch(ctx,
		metav1.ListOptions{FieldSelector: "type=" + string(corev1.SecretTypeBootstrapToken)})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	tw := &tokenWatch{deleted: map[string]bool{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			s, ok := ev.Object.(*corev1.Secret)
			if !ok {
				continue
			}
			tw.mu.Lock()
			switch ev.Type {
			case watch.Added:
				tw.added = append(tw.added, s)
			case watch.Deleted:
				tw.deleted[s.Name] = true
			}
			tw.mu.Unlock()
		}
	}()
	t.Cleanup(func() { w.Stop(); cancel(); <-done })
	return tw
}

// check checks the token of node.
func (tw *tokenWatch) check(node string) error {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	var mine []*corev1.Secret
	for _, s := range tw.added {
		if string(s.Data["description"]) == "windows_node "+node {
			mine = append(mine, s)
		}
	}
	if len(mine) != 1 {
		return fmt.Errorf("%d bootstrap tokens were created for %s, want 1", len(mine), node)
	}
	s := mine[0]
	var keys []string
	for k := range s.Data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"auth-extra-groups", "description", "expiration", "token-id", "token-secret",
		"usage-bootstrap-authentication"} // no signing: the kubelet's TLS bootstrap authenticates, nothing is signed
	if !slices.Equal(keys, want) {
		return fmt.Errorf("bootstrap token %s has fields %v, want exactly %v", s.Name, keys, want)
	}
	for k, v := range map[string]string{
		"usage-bootstrap-authentication": "true",
		"auth-extra-groups":              "system:bootstrappers:kubeadm:default-node-token",
	} {
		if got := string(s.Data[k]); got != v {
			return fmt.Errorf("bootstrap token %s: %s = %q, want %q", s.Name, k, got, v)
		}
	}
	exp, err := time.Parse(time.RFC3339, string(s.Data["expiration"]))
	if err != nil {
		return fmt.Errorf("bootstrap token %s: expiration: %w", s.Name, err)
	}
	// The timestamp is to the second.
	if ttl := exp.Sub(s.CreationTimestamp.Time); ttl <= 0 || ttl > winnode.BootstrapTokenTTL+time.Second {
		return fmt.Errorf("bootstrap token %s expires %s after its creation, want within %s", s.Name, ttl, winnode.BootstrapTokenTTL)
	}
	if !tw.deleted[s.Name] {
		return fmt.Errorf("bootstrap token %s of %s was not deleted after the join", s.Name, node)
	}
	return nil
}

// noAdminCredentialOnHosts searches every file under the simulated hosts'
// directory for credentials that must never reach a Windows node.
func noAdminCredentialOnHosts(t *testing.T) error {
	sb := acctest.Sandbox
	if sb == nil {
		t.Log("lab mode: the hosts' files are not searched for credentials (the simulated hosts' directories, the sandbox's PKI)")
		return nil
	}
	p := sb.PKI
	caKey, err := os.ReadFile(p.CAKeyFile)
	if err != nil {
		return err
	}
	saKey, err := os.ReadFile(p.ServiceAccountKeyFile)
	if err != nil {
		return err
	}
	kc, err := clientcmd.LoadFromFile(sb.ProviderKubeconfig)
	if err != nil {
		return err
	}
	var saToken string
	for _, a := range kc.AuthInfos {
		saToken = a.Token
	}
	if saToken == "" {
		return errors.New("the provider's kubeconfig holds no token")
	}
	secrets := map[string][]byte{
		"the cluster admin's client certificate": p.Admin.CertPEM,
		"the cluster admin's client key":         p.Admin.KeyPEM,
		"the CA key":                             caKey,
		"the ServiceAccount signing key":         saKey,
		"the controller manager's client key":    p.ControllerManager.KeyPEM,
		"the scheduler's client key":             p.Scheduler.KeyPEM,
		"the API server's kubelet client key":    p.APIServerKubeletClient.KeyPEM,
		"the provider's ServiceAccount token":    []byte(saToken),
		"the vSphere password":                   []byte(sb.VSphere.ProviderPassword),
		"the vSphere administrator's password":   []byte(sb.VSphere.Password),
	}
	type needle struct {
		what string
		b    []byte
	}
	var needles []needle
	for what, s := range secrets {
		forms := map[string][]byte{"": s, " (UTF-16)": utf16le(string(s))}
		// base64 at any alignment (in a kubeconfig's *-data, an answer
		// file, an encoded command), as TestAccSecrets_failingSensitiveSteps.
		for i, e := range encodingsOf(string(s)) {
			forms[fmt.Sprintf(" (base64 #%d)", i)] = []byte(e)
		}
		// A PEM's body lines survive any re-wrapping of the PEM: look for
		// its longest one too.
		if lines := pemBodyLines(s); len(lines) > 0 {
			forms[" (a line of its PEM)"] = lines[0]
		}
		for form, b := range forms {
			needles = append(needles, needle{what + form, b})
		}
	}
	// A control: the cluster CA certificate, which the node must hold (its
	// kubeconfigs carry it base64-encoded), proves the search sees what
	// the node was given.
	control := false
	caForms := [][]byte{sb.CA.CertPEM}
	for _, e := range encodingsOf(string(sb.CA.CertPEM)) {
		caForms = append(caForms, []byte(e))
	}
	files := 0
	var found []string
	err = filepath.WalkDir(sb.Hosts.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		for _, f := range caForms {
			control = control || bytes.Contains(body, f)
		}
		for _, n := range needles {
			if bytes.Contains(body, n.b) {
				found = append(found, fmt.Sprintf("%s in %s", n.what, path))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if files < 20 || !control {
		return fmt.Errorf("%d files under %s, the cluster CA certificate found: %v: the search does not see the hosts' disks", files, sb.Hosts.Dir, control)
	}
	if len(found) > 0 {
		return fmt.Errorf("credentials that must not reach a node were written to a host:\n%s", strings.Join(found, "\n"))
	}
	t.Logf("searched %d files of the simulated hosts for %d credential forms: none found", files, len(needles))
	return nil
}

// pemBodyLines returns the base64 lines of a PEM block, longest first.
func pemBodyLines(b []byte) [][]byte {
	var out [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if len(l) >= 40 && !bytes.HasPrefix(l, []byte("-----")) {
			out = append(out, l)
		}
	}
	slices.SortStableFunc(out, func(a, b []byte) int { return len(b) - len(a) })
	return out
}

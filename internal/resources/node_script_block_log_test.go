package resources_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// TestAccNode_noSecretInScriptBlockLog: on a node whose site turned
// PowerShell script block logging on (every script the join runs lands in
// event 4104 of Microsoft-Windows-PowerShell/Operational, which local users
// may read), a join leaves no trace of the bootstrap token or its
// kubeconfig in the log: the kubeconfig is uploaded, never written from a
// script. The log is read after a rejoin (the Node deleted), the policy set
// on the running guest before it.
func TestAccNode_noSecretInScriptBlockLog(t *testing.T) {
	acctest.RequireSandbox(t, "the simulated host's event log")
	acctest.PreCheck(t)
	image, node := acctest.Name("img"), acctest.NodeName("sbl")
	cn := acctest.ComputerNameOf(node)
	config := acctest.NodeConfig(image, []string{node}, "")
	// The bootstrap kubeconfig's first line and its start in base64 (a file
	// inlined as base64 is encoded from its first byte), the token's format.
	kubeconfigB64 := base64.StdEncoding.EncodeToString([]byte("apiVersion: v1\nclusters:\n"))[:24]
	tokenPattern := regexp.MustCompile(`\b[a-z0-9]{6}\.[a-z0-9]{16}\b`)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNodesDestroyed(t),
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: func(*terraform.State) error {
					host := acctest.Sandbox.Hosts.ByName(cn)
					if host == nil {
						return fmt.Errorf("no simulated host %s", cn)
					}
					if err := host.SetRegistryValue(winsim.ScriptBlockLoggingKey, "EnableScriptBlockLogging", winsim.RegValue{Type: winsim.RegDWord, DWord: 1}); err != nil {
						return err
					}
					return acctest.Kube(t).CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{})
				},
				ExpectNonEmptyPlan: true,
			},
			{
				Config: config,
				Check: func(*terraform.State) error {
					host := acctest.Sandbox.Hosts.ByName(cn)
					if host == nil {
						return fmt.Errorf("no simulated host %s after the rejoin", cn)
					}
					events := host.Events(winsim.PowerShellOperationalLog)
					joinLogged := false
					for _, e := range events {
						text := e.Data["ScriptBlockText"]
						joinLogged = joinLogged || strings.Contains(text, "# step: join-files")
						for _, bad := range []string{"tls-bootstrap-token-user", kubeconfigB64} {
							if strings.Contains(text, bad) {
								return fmt.Errorf("event %d (level %d) holds the bootstrap kubeconfig (%q):\n%s", e.ID, e.Level, bad, text)
							}
						}
						if m := tokenPattern.FindString(text); m != "" {
							return fmt.Errorf("event %d holds a bootstrap token %q:\n%s", e.ID, m, text)
						}
					}
					if !joinLogged {
						return fmt.Errorf("script block logging is on, yet the rejoin's join-files script is not in the log (%d events)", len(events))
					}
					return nil
				},
			},
		},
	})
}

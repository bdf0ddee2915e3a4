package resources_test

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// httpsBootstrapTransport is the transport of a node whose WinRM HTTPS
// listener the provider creates over vmtools.
func httpsBootstrapTransport() string {
	return fmt.Sprintf(`  transport = {
    type            = "winrm"
    port            = %s
    https_bootstrap = "vmtools"
  }
`, os.Getenv("SANDBOX_WINRM_HTTPS_PORT"))
}

// servedCertSHA256 is the SHA-256 of the certificate a guest's HTTPS
// listener presents now, read by the test without trusting it.
func servedCertSHA256(t *testing.T, host *winsim.Host) string {
	t.Helper()
	addr := net.JoinHostPort(host.IP(), strconv.Itoa(host.Ports().WinRMHTTPS))
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // reads what is presented, trusts nothing
	if err != nil {
		t.Fatalf("the HTTPS listener of %s (%s): %v", host.ComputerName(), addr, err)
	}
	defer func() { _ = conn.Close() }()
	sum := sha256.Sum256(conn.ConnectionState().PeerCertificates[0].Raw)
	return hex.EncodeToString(sum[:])
}

var sha256Pattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

// TestAccNode_httpsBootstrap: two nodes cloned from an image of the stock
// template (WinRM HTTP only, no HTTPS listener) with https_bootstrap: the
// provider creates each one's HTTPS listener over vmtools with a key made on
// that clone, the state pins each certificate (two clones, two
// certificates, each the one its guest serves), and the join steps run over
// WinRM HTTPS. When a guest's listener is given another certificate, the
// next connection (a re-join) is refused with a diagnostic naming the
// pinned and the presented fingerprints and the fix.
func TestAccNode_httpsBootstrap(t *testing.T) {
	acctest.RequireSandbox(t, "the simulated hosts' WinRM HTTPS listeners")
	acctest.PreCheck(t)
	image, n0, n1 := acctest.Name("img"), acctest.NodeName("hb"), acctest.NodeName("hb")
	config := acctest.NodeConfig(image, []string{n0, n1}, httpsBootstrapTransport())
	var pinned0, replaced string
	// The refusal names the fingerprints, known only once the PreConfig
	// replaced the certificate: it fills this pattern in then.
	refused := regexp.MustCompile(`.`)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNodesDestroyed(t),
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: func(s *terraform.State) error {
					pins := map[string]string{}
					for i, n := range []string{n0, n1} {
						attrs := s.RootModule().Resources[fmt.Sprintf("windows_node.n%d", i)].Primary.Attributes
						pin := attrs["transport.winrm_certificate_sha256"]
						host := acctest.Sandbox.Hosts.ByName(acctest.ComputerNameOf(n))
						if host == nil {
							return fmt.Errorf("no simulated host for %s", n)
						}
						if !sha256Pattern.MatchString(pin) {
							return fmt.Errorf("%s: winrm_certificate_sha256 = %q", n, pin)
						}
						if served := servedCertSHA256(t, host); served != pin {
							return fmt.Errorf("%s: the state pins %s, the guest serves %s", n, pin, served)
						}
						if err := ranOver(host, "winrm-https", "join-files", "kubelet-service"); err != nil {
							return fmt.Errorf("%s: %w", n, err)
						}
						if err := ranOver(host, "vmtools", "winrm-https-listener"); err != nil {
							return fmt.Errorf("%s: %w", n, err)
						}
						// 5986 admits the management network only: the provider's
						// own address (the sandbox's 127.0.0.1, which served the
						// certificate above); a host elsewhere is dropped.
						if err := droppedFrom("127.9.9.9", net.JoinHostPort(host.IP(), strconv.Itoa(host.Ports().WinRMHTTPS))); err != nil {
							return fmt.Errorf("%s: %w", n, err)
						}
						pins[n] = pin
					}
					if pins[n0] == pins[n1] {
						return fmt.Errorf("both clones present the certificate %s", pins[n0])
					}
					pinned0 = pins[n0]
					return acctest.CheckNodeReady(t, n0)
				},
			},
			{
				// Someone gives node 0's listener another certificate, and its
				// Node goes: the re-join must refuse the guest.
				PreConfig: func() {
					host := acctest.Sandbox.Hosts.ByName(acctest.ComputerNameOf(n0))
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					defer cancel()
					if _, stderr, code := host.Console(ctx, `$ErrorActionPreference = 'Stop'
$c = New-SelfSignedCertificate -DnsName $env:COMPUTERNAME -CertStoreLocation 'Cert:\LocalMachine\My'
Set-WSManInstance -ResourceURI winrm/config/Listener -SelectorSet @{Address='*'; Transport='HTTPS'} -ValueSet @{CertificateThumbprint=$c.Thumbprint} | Out-Null`); code != 0 {
						t.Fatalf("replacing the certificate on the guest: exit %d: %s", code, stderr)
					}
					if replaced = servedCertSHA256(t, host); replaced == pinned0 {
						t.Fatal("the guest serves the pinned certificate still")
					}
					*refused = *acctest.Wrapped(`(?s)updating Windows node \(` + n0 + `\): WinRM HTTPS certificate mismatch.*SHA-256 ` + replaced +
						`.*pinned in transport.winrm_certificate_sha256 is ` + pinned0 + `.*man-in-the-middle.*Get-WSManInstance.*` +
						`set transport.winrm_certificate_sha256 to it.*terraform apply -replace`)
					if err := acctest.Kube(t).CoreV1().Nodes().Delete(context.Background(), n0, metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config:      config,
				ExpectError: refused,
			},
		},
	})
}

// ranOver checks that each step ran on host, and only over transport.
func ranOver(host *winsim.Host, transport string, steps ...string) error {
	for _, step := range steps {
		ran := false
		for _, r := range host.Scripts() {
			if r.Step != step {
				continue
			}
			if r.Transport != transport {
				return fmt.Errorf("step %q ran over %q, want %s", step, r.Transport, transport)
			}
			ran = true
		}
		if !ran {
			return fmt.Errorf("step %q did not run", step)
		}
	}
	return nil
}

// TestAccNode_httpsBootstrapRefused: what contradicts per-clone HTTPS trust
// is refused at plan (a CA or name check beside the pin, the default
// transport, a golden image, whose build VM becomes the template), and a
// node cloned from a template that carries an HTTPS listener (the prepared
// template's one certificate, with its key in every clone) fails at the
// listener step with a diagnostic naming the shared template certificate
// and the fix; nothing is pinned.
func TestAccNode_httpsBootstrapRefused(t *testing.T) {
	acctest.RequireSandbox(t, "the sandbox's prepared template and its WinRM HTTPS port")
	acctest.PreCheck(t)
	node := acctest.NodeName("hbr")
	prepared := os.Getenv("SANDBOX_TEMPLATE_2022_PREPARED")
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNodesDestroyed(t),
		Steps: []resource.TestStep{
			{
				Config: acctest.NodeConfigOnTemplate(prepared, []string{node}, `  transport = {
    type            = "winrm"
    https_bootstrap = "vmtools"
    ca_certificate  = "unused"
  }
`),
				PlanOnly:    true,
				ExpectError: acctest.Wrapped(`(?s)Conflicting certificate verification.*transport.ca_certificate does not apply with transport.https_bootstrap`),
			},
			{
				Config:      acctest.NodeConfigOnTemplate(prepared, []string{node}, "  transport = {\n    https_bootstrap = \"vmtools\"\n  }\n"),
				PlanOnly:    true,
				ExpectError: acctest.Wrapped(`transport.https_bootstrap does not apply to the default transport, type = "vmtools"`),
			},
			{
				Config: acctest.GoldenImageConfig(acctest.Name("img"), map[string]string{
					"transport": "{\n    type            = \"winrm\"\n    https_bootstrap = \"vmtools\"\n  }",
				}),
				PlanOnly:    true,
				ExpectError: acctest.Wrapped(`(?s)https_bootstrap is not supported here.*build VM becomes the template`),
			},
			{
				Config: acctest.NodeConfigOnTemplate(prepared, []string{node}, httpsBootstrapTransport()),
				ExpectError: acctest.Wrapped(`(?s)creating Windows node \(` + node + `\).*the template has a WinRM HTTPS certificate.*shared template certificate.*` +
					`Fix: remove the HTTPS listener and its certificate from the template.*already has a WinRM HTTPS listener, for ` +
					os.Getenv("SANDBOX_TEMPLATE_2022_PREPARED_NAME") + ` with the certificate [0-9A-F]{40}`),
			},
		},
	})
}

// droppedFrom dials addr from a source address and expects the attempt to
// go unanswered until the dial's timeout, as the guest's firewall drops a
// host its rule does not name.
func droppedFrom(source, addr string) error {
	const timeout = 2 * time.Second
	d := net.Dialer{Timeout: timeout, LocalAddr: &net.TCPAddr{IP: net.ParseIP(source)}}
	c, err := d.Dial("tcp", addr)
	if err == nil {
		_ = c.Close()
		return fmt.Errorf("%s admitted a connection from %s, outside transport.management_cidrs' default", addr, source)
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		return fmt.Errorf("dial %s from %s: %w, want dropped (a timeout)", addr, source, err)
	}
	return nil
}

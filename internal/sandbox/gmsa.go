package sandbox

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/gmsawebhook"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/kubeletsim"
)

// InstallGMSAWebhook gives the cluster windows-gmsa's CRD and admission
// webhook (gmsawebhook: upstream's program is not on the module proxy),
// registered for the namespaces selector picks only, since the cluster is
// shared by tests running at once. The caller stops it (Stop removes the
// CRD and the configurations too).
func (s *Sandbox) InstallGMSAWebhook(ctx context.Context, selector *metav1.LabelSelector) (*gmsawebhook.Webhook, error) {
	// The webhook is a cluster-side server, not a guest: the API server
	// calls it over TLS verified by the configuration's caBundle, as
	// upstream's deploy-gmsa-webhook.sh issues it a certificate of its own.
	certPEM, keyPEM, err := s.CA.IssueServing("127.0.0.1")
	if err != nil {
		return nil, fmt.Errorf("issuing the gMSA webhook's certificate: %w", err)
	}
	dyn, err := dynamic.NewForConfig(s.ControlPlane.Config)
	if err != nil {
		return nil, err
	}
	return gmsawebhook.Install(ctx, gmsawebhook.Options{
		Clientset: s.ControlPlane.Client, Dynamic: dyn,
		CertPEM: certPEM, KeyPEM: keyPEM, CABundle: s.CA.CertPEM,
		NamespaceSelector: selector,
	})
}

// GMSADomain is the sandbox's domain as the hosts' container runtimes ask
// it for a gMSA's password (kubeletsim.GMSADomain): a host is a member of
// the domain when the directory holds an enabled computer account of its
// name (a join made it; an unjoin disabled it), and may retrieve the
// password when the gMSA's msDS-GroupMSAMembership grants its account
// (addomain.RetrieveManagedPassword). A host outside the domain fails as
// one that finds no controller (1355), a member the gMSA does not grant
// with access denied (5).
func (s *Sandbox) GMSADomain() kubeletsim.GMSADomain { return gmsaDomain{s.Domain} }

type gmsaDomain struct{ d *Domain }

func (g gmsaDomain) RetrieveManagedPassword(_ context.Context, computer, domain, gmsa string) error {
	if g.d == nil || !strings.EqualFold(strings.TrimSuffix(domain, "."), g.d.Domain()) {
		return kubeletsim.ErrNoSuchDomain
	}
	if c, ok := g.d.Computer(computer); !ok || c.Disabled {
		return kubeletsim.ErrNoSuchDomain
	}
	if err := g.d.Controller.RetrieveManagedPassword(computer+"$", gmsa); err != nil {
		return kubeletsim.ErrAccessDenied
	}
	return nil
}

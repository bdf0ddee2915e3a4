package sandbox

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/gmsawebhook"
)

// InstallGMSAWebhook gives the cluster windows-gmsa's CRD and admission
// webhook (gmsawebhook: upstream's program is not on the module proxy),
// registered for the namespaces selector picks only, since the cluster is
// shared by tests running at once. The caller stops it (Stop removes the
// CRD and the configurations too).
func (s *Sandbox) InstallGMSAWebhook(ctx context.Context, selector *metav1.LabelSelector) (*gmsawebhook.Webhook, error) {
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

package guest

import (
	"context"
	"fmt"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/remote"
)

// CreateHTTPSListener gives a guest its own WinRM HTTPS listener and returns
// the SHA-256 of its certificate, for the caller to pin
// (remote.Config.CertSHA256) and keep. It runs bootstrap.HTTPSListenerStep
// over via, which must authenticate the guest without trusting the network:
// vmtools, where vCenter's verified TLS and the guest's credentials carry
// the step and its output. The certificate is therefore the guest's own, made
// with a key that never leaves it; what the network later presents on 5986 is
// checked against it. address is the guest's address, named in the
// certificate; admit are the addresses or CIDRs its firewall rule admits to
// 5986.
func CreateHTTPSListener(ctx context.Context, connect Connector, via remote.Config, address string, admit []string) (string, error) {
	if via.Protocol != remote.ProtocolVMTools {
		return "", Stage("creating the WinRM HTTPS listener", fmt.Errorf("the listener is created over vmtools, not %s", via.Protocol))
	}
	step, err := bootstrap.HTTPSListenerStep(address, admit)
	if err != nil {
		return "", Stage("rendering the WinRM HTTPS listener step", err)
	}
	g, err := Connect(ctx, connect, via, "HTTPS listener")
	if err != nil {
		return "", Stage("connecting over vmtools to create the WinRM HTTPS listener", err)
	}
	defer func() { _ = g.Close() }()
	out, err := g.Run(ctx, step)
	if err != nil {
		return "", err
	}
	cert, err := bootstrap.ParseHTTPSCertificate(out)
	if err != nil {
		return "", &StageError{Stage: "reading the WinRM HTTPS listener's certificate", Err: err, Evidence: remote.LastLines(out, 5)}
	}
	return remote.CertificateSHA256(cert.Raw), nil
}

package bootstrap

import (
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"strings"
)

// HTTPSListenerStepName names the step that creates a guest's WinRM HTTPS
// listener (HTTPSListenerStep).
const HTTPSListenerStepName = "winrm-https-listener"

// SharedCertificateMarker starts the failure of HTTPSListenerStep on a
// guest that has an HTTPS listener already, from its template.
const SharedCertificateMarker = "SHARED-TEMPLATE-CERTIFICATE"

// HTTPSListenerStep makes a self-signed certificate on the guest with a
// non-exportable key (for its computer name and address), opens TCP 5986 in
// its firewall to the addresses of admit (the management network) only,
// and creates the WinRM HTTPS listener bound to it; it prints
// the certificate (ParseHTTPSCertificate). It refuses a guest that has an
// HTTPS listener already (SharedCertificateMarker). Not rerunnable: a
// second run would find its own listener and refuse it.
func HTTPSListenerStep(address string, admit []string) (Step, error) {
	if len(admit) == 0 {
		return Step{}, errors.New("no address for the WinRM HTTPS firewall rule to admit")
	}
	for _, a := range admit {
		if net.ParseIP(a) == nil {
			if _, _, err := net.ParseCIDR(a); err != nil {
				return Step{}, fmt.Errorf("WinRM HTTPS firewall address %q is neither an IP address nor a CIDR", a)
			}
		}
	}
	script, err := render(HTTPSListenerStepName, HTTPSListenerStepName, map[string]any{
		"Address": address, "FriendlyName": "WinRM HTTPS (terraform-provider-windows)", "RuleName": "WinRM-HTTPS-In-TCP-terraform-provider-windows",
		"Admit": admit,
	})
	return Step{Name: HTTPSListenerStepName, Script: script}, err
}

// ParseHTTPSCertificate reads the certificate HTTPSListenerStep printed.
func ParseHTTPSCertificate(out string) (*x509.Certificate, error) {
	for _, line := range strings.Split(strings.ReplaceAll(out, "\r\n", "\n"), "\n") {
		if b64, ok := strings.CutPrefix(strings.TrimSpace(line), "WINRM-CERTIFICATE="); ok {
			der, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				return nil, fmt.Errorf("the listener's certificate is not base64: %w", err)
			}
			return x509.ParseCertificate(der)
		}
	}
	return nil, errors.New("the step printed no WINRM-CERTIFICATE= line")
}

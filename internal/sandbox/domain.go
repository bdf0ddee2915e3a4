package sandbox

import (
	"crypto/tls"
	"fmt"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/addomain"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/localport"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/pki"
)

// The sandbox's Active Directory domain, set up as an administrator sets one
// up for Kubernetes nodes: an OU for them and a join account delegated
// "Create/Delete Computer objects" on it (Microsoft Learn, "Delegate
// permissions to join computers to a domain"), so the account creates and
// removes its nodes' computer accounts there and nowhere else.
const (
	// ADDomain is the domain's DNS name; ADNetBIOS its NetBIOS name.
	ADDomain  = "corp.example.test"
	ADNetBIOS = "CORP"
	// ADJoinUser is the join account (sAMAccountName).
	ADJoinUser = "svc-k8s-join"
)

// ADOU is the OU the sandbox's Windows nodes join into.
func ADOU() string { return "OU=Kubernetes Nodes,DC=corp,DC=example,DC=test" }

// Domain is the sandbox's domain and its join account's credentials.
type Domain struct {
	*addomain.Controller
	JoinUser, JoinPassword string
	AdminPassword          string
}

// startDomain starts the domain controller on loopback ports: LDAP, and
// LDAPS with a certificate of the sandbox's CA for 127.0.0.1 and the
// controller's DNS name.
func startDomain(ca *pki.CA) (*Domain, error) {
	ports, err := localport.Reserve(2, false)
	if err != nil {
		return nil, err
	}
	cert, err := ca.ServingCertificate("127.0.0.1", "localhost", "dc1."+ADDomain)
	if err != nil {
		return nil, err
	}
	admin, err := pki.RandomPassword(16)
	if err != nil {
		return nil, err
	}
	join, err := pki.RandomPassword(16)
	if err != nil {
		return nil, err
	}
	c, err := addomain.Start(addomain.Options{Domain: ADDomain, NetBIOS: ADNetBIOS, AdminPassword: admin, Addr: fmt.Sprintf("127.0.0.1:%d", ports[0]),
		LDAPSAddr: fmt.Sprintf("127.0.0.1:%d", ports[1]), TLS: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}})
	if err != nil {
		return nil, err
	}
	d := &Domain{Controller: c, JoinUser: ADJoinUser, JoinPassword: join, AdminPassword: admin}
	if err := d.setUp(); err != nil {
		_ = c.Stop()
		return nil, err
	}
	return d, nil
}

func (d *Domain) setUp() error {
	if err := d.AddOU(ADOU()); err != nil {
		return err
	}
	if _, err := d.AddUser("CN=Users,"+d.BaseDN(), d.JoinUser, d.JoinPassword); err != nil {
		return err
	}
	return d.Delegate(ADOU(), d.JoinUser)
}

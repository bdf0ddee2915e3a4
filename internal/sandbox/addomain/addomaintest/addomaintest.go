// Package addomaintest starts the sandbox's domain controller for one test:
// a free loopback port, stopped at cleanup, and the join account an
// administrator prepares (an OU and a user delegated to join computers into
// it, as the sandbox's own domain is set up: internal/sandbox/domain.go).
package addomaintest

import (
	"fmt"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/addomain"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/localport"
)

// Domain is the DNS name of the domains tests start.
const Domain = "corp.example.test"

// Start starts a domain controller of opts.Domain (Domain when empty) on a
// free loopback port (opts.Addr is chosen), stopped when the test ends.
func Start(t testing.TB, opts addomain.Options) *addomain.Controller {
	t.Helper()
	ports, err := localport.Reserve(1, false)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Domain == "" {
		opts.Domain = Domain
	}
	opts.Addr = fmt.Sprintf("127.0.0.1:%d", ports[0])
	dc, err := addomain.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dc.Stop() })
	return dc
}

// DelegatedOU makes the OU ou (a name: "OU=<ou>," and the domain's DN) and
// the user CN=Users' user with password, delegated to join computers into
// it; it returns the OU's DN.
func DelegatedOU(t testing.TB, dc *addomain.Controller, ou, user, password string) string {
	t.Helper()
	dn := "OU=" + ou + "," + dc.BaseDN()
	if err := dc.AddOU(dn); err != nil {
		t.Fatal(err)
	}
	if _, err := dc.AddUser("CN=Users,"+dc.BaseDN(), user, password); err != nil {
		t.Fatal(err)
	}
	if err := dc.Delegate(dn, user); err != nil {
		t.Fatal(err)
	}
	return dn
}

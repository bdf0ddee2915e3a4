package addirectory_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/addirectory"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/addomain"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/addomain/addomaintest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/localport"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/pki"
)

func TestValidateDomain(t *testing.T) {
	for _, c := range []struct{ domain, ou, field string }{
		{"corp.example.com", "", ""},
		{"corp.example.com", "OU=Kubernetes Nodes,DC=corp,DC=example,DC=com", ""},
		{"corp", "", "domain"},
		{"corp..com", "", "domain"},
		{"corp.example.com", "Kubernetes", "ou"},
		{"corp.example.com", "CN=Computers,DC=corp,DC=example,DC=com", "ou"},
		{"corp.example.com", "OU=K8s,DC=other,DC=example,DC=com", "ou"},
	} {
		if field, msg := addirectory.ValidateDomain(c.domain, c.ou); field != c.field {
			t.Errorf("ValidateDomain(%q, %q) = %q %q, want field %q", c.domain, c.ou, field, msg, c.field)
		}
	}
}

// TestDeleteComputer deletes a joined node's account with the delegated
// join account, over LDAP, against the sandbox's domain controller.
func TestDeleteComputer(t *testing.T) {
	ctx := context.Background()
	dc := addomaintest.Start(t, addomain.Options{})
	ou := addomaintest.DelegatedOU(t, dc, "Nodes", "svc-join", "J0in!")
	if _, err := addomain.Join(ctx, addomain.Locators{dc.Domain(): dc}, addomain.JoinRequest{Domain: dc.Domain(), OU: ou, User: "svc-join", Password: "J0in!", ComputerName: "win-a"}); err != nil {
		t.Fatal(err)
	}
	cfg := addirectory.Config{JoinUser: "svc-join", JoinPassword: "wrong", LDAPURL: "ldap://" + dc.Addr()}
	if _, err := addirectory.DeleteComputer(ctx, cfg, dc.Domain(), ou, "win-a"); err == nil || !strings.Contains(err.Error(), "active_directory.join_password") {
		t.Fatalf("a wrong password: %v", err)
	}
	cfg.JoinPassword = "J0in!"
	if d, err := addirectory.DeleteComputer(ctx, cfg, dc.Domain(), ou, "win-a"); err != nil || !d.Deleted || d.DN != "CN=WIN-A,"+ou {
		t.Fatalf("deleting: %+v %v", d, err)
	}
	if _, ok := dc.Computer("WIN-A"); ok {
		t.Fatal("the account is still in the directory")
	}
	if d, err := addirectory.DeleteComputer(ctx, cfg, dc.Domain(), ou, "win-a"); err != nil || d.Deleted || d.DN != "" {
		t.Fatalf("deleting again: %+v %v", d, err)
	}

	// Name clashes: an account of the node's name that another account
	// created in the node's OU (the join fails 2732) or that is in another
	// container (2224) is another computer's, and destroying the node that
	// failed to join keeps it.
	if _, err := dc.AddUser("CN=Users,"+dc.BaseDN(), "other-join", "0ther!"); err != nil {
		t.Fatal(err)
	}
	if err := dc.Delegate(ou, "other-join"); err != nil {
		t.Fatal(err)
	}
	loc := addomain.Locators{dc.Domain(): dc}
	for _, c := range []struct{ name, ou string }{{"win-b", ou}, {"win-c", ""}} {
		if _, err := addomain.Join(ctx, loc, addomain.JoinRequest{Domain: dc.Domain(), OU: c.ou, User: "other-join", Password: "0ther!", ComputerName: c.name}); err != nil {
			t.Fatal(err)
		}
		var je *addomain.JoinError
		if _, err := addomain.Join(ctx, loc, addomain.JoinRequest{Domain: dc.Domain(), OU: ou, User: "svc-join", Password: "J0in!", ComputerName: c.name}); !errors.As(err, &je) {
			t.Fatalf("%s: the clashing join: %v", c.name, err)
		}
		before, _ := dc.Computer(strings.ToUpper(c.name))
		d, err := addirectory.DeleteComputer(ctx, cfg, dc.Domain(), ou, c.name)
		if err != nil || d.Deleted || d.Kept == "" || d.DN != before.DN {
			t.Fatalf("%s (join failed with %d): %+v %v, want the account kept with a reason", c.name, je.Code, d, err)
		}
		t.Logf("%s, join refused with %d: kept: %s", c.name, je.Code, d.Kept)
		if after, ok := dc.Computer(strings.ToUpper(c.name)); !ok || after.SID != before.SID {
			t.Fatalf("%s: the other computer's account %+v is gone or changed (%+v)", c.name, before, after)
		}
	}
}

// TestDeleteComputerLDAPS removes an account over LDAPS (ldap_url
// ldaps://, ca_file) from a controller serving TLS with a certificate of the
// sandbox's kind of CA (internal/sandbox/pki); a ca_file of another CA, or a
// URL naming the controller otherwise than its certificate, fails naming the
// setting to fix.
func TestDeleteComputerLDAPS(t *testing.T) {
	ctx := context.Background()
	ca, err := pki.NewCA("corp.example.test CA")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.ServingCertificate("dc1.corp.example.test", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	ports, err := localport.Reserve(2, false)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := addomain.Start(addomain.Options{Domain: "corp.example.test", Addr: fmt.Sprintf("127.0.0.1:%d", ports[0]),
		LDAPSAddr: fmt.Sprintf("127.0.0.1:%d", ports[1]), TLS: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dc.Stop() })
	ou := "OU=Nodes," + dc.BaseDN()
	if err := dc.AddOU(ou); err != nil {
		t.Fatal(err)
	}
	if _, err := dc.AddUser("CN=Users,"+dc.BaseDN(), "svc-join", "J0in!"); err != nil {
		t.Fatal(err)
	}
	if err := dc.Delegate(ou, "svc-join"); err != nil {
		t.Fatal(err)
	}
	if _, err := addomain.Join(ctx, addomain.Locators{dc.Domain(): dc}, addomain.JoinRequest{Domain: dc.Domain(), OU: ou, User: "svc-join", Password: "J0in!", ComputerName: "win-s"}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, ca.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	other, err := pki.NewCA("another CA")
	if err != nil {
		t.Fatal(err)
	}
	otherFile := filepath.Join(dir, "other.pem")
	if err := os.WriteFile(otherFile, other.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	ldaps := "ldaps://" + dc.LDAPSAddr()
	for _, c := range []struct{ url, caFile, want string }{
		{ldaps, otherFile, "active_directory.ca_file"},
		{ldaps, "", "active_directory.ca_file"},
		{fmt.Sprintf("ldaps://localhost:%d", ports[1]), caFile, "active_directory.ldap_url"},
	} {
		cfg := addirectory.Config{JoinUser: "svc-join", JoinPassword: "J0in!", LDAPURL: c.url, CAFile: c.caFile}
		if _, err := addirectory.DeleteComputer(ctx, cfg, dc.Domain(), ou, "win-s"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s with ca_file %q: %v, want an error naming %s", c.url, c.caFile, err, c.want)
		}
	}
	if _, ok := dc.Computer("WIN-S"); !ok {
		t.Fatal("a refused LDAPS connection deleted the account")
	}
	cfg := addirectory.Config{JoinUser: "svc-join", JoinPassword: "J0in!", LDAPURL: ldaps, CAFile: caFile}
	if d, err := addirectory.DeleteComputer(ctx, cfg, dc.Domain(), ou, "win-s"); err != nil || !d.Deleted {
		t.Fatalf("deleting over LDAPS: %+v %v", d, err)
	}
	if _, ok := dc.Computer("WIN-S"); ok {
		t.Fatal("the account is still in the directory")
	}
}

package addirectory_test

import (
	"context"
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/addirectory"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/addomain"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/addomain/addomaintest"
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
	if _, err := addirectory.DeleteComputer(ctx, cfg, dc.Domain(), "win-a"); err == nil || !strings.Contains(err.Error(), "active_directory.join_password") {
		t.Fatalf("a wrong password: %v", err)
	}
	cfg.JoinPassword = "J0in!"
	if deleted, err := addirectory.DeleteComputer(ctx, cfg, dc.Domain(), "win-a"); err != nil || !deleted {
		t.Fatalf("deleting: %v %v", deleted, err)
	}
	if _, ok := dc.Computer("WIN-A"); ok {
		t.Fatal("the account is still in the directory")
	}
	if deleted, err := addirectory.DeleteComputer(ctx, cfg, dc.Domain(), "win-a"); err != nil || deleted {
		t.Fatalf("deleting again: %v %v", deleted, err)
	}
}

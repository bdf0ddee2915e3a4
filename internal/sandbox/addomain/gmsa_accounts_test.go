package addomain

import (
	"context"
	"errors"
	"testing"
)

// A gMSA needs the KDS root key; its password goes to the computers its
// msDS-GroupMSAMembership grants through the hosts group, nested or not,
// and to no other.
func TestGMSAPasswordGoesToTheHostsGroup(t *testing.T) {
	c := startDomain(t)
	if _, err := c.AddGroup("CN=Users,"+c.BaseDN(), "WebApp01Hosts"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddGMSA("WebApp01", "webapp01.corp.example.test", "WebApp01Hosts"); !errors.Is(err, ErrNoKdsRootKey) || err.Error() != "Key does not exist" {
		t.Fatalf("without a KDS root key: %v", err)
	}
	c.AddKdsRootKey()
	dn, err := c.AddGMSA("WebApp01", "webapp01.corp.example.test", "WebApp01Hosts")
	if err != nil {
		t.Fatal(err)
	}
	if dn != "CN=WebApp01,CN=Managed Service Accounts,"+c.BaseDN() {
		t.Fatalf("dn = %s", dn)
	}
	if _, err := c.AddGMSA("WebApp01", "webapp01.corp.example.test"); err == nil {
		t.Fatal("a second gMSA of the same name was created")
	}
	if _, err := c.AddGMSA("Other", "other.corp.example.test", "NoSuchGroup"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("an unknown principal: %v", err)
	}
	loc := Locators{c.Domain(): c}
	for _, name := range []string{"win-a", "win-b"} {
		if _, err := Join(context.Background(), loc, JoinRequest{Domain: c.Domain(), OU: "OU=Kubernetes," + c.BaseDN(),
			User: `CORP\svc-join`, Password: "svc-join-P4ss", ComputerName: name}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.RetrieveManagedPassword("WIN-A$", "WebApp01"); !errors.Is(err, ErrPasswordReadDenied) {
		t.Fatalf("a host outside the group: %v", err)
	}
	if _, err := c.AddGroup("CN=Users,"+c.BaseDN(), "AllHosts"); err != nil {
		t.Fatal(err)
	}
	if err := c.AddMember("AllHosts", "WIN-A$"); err != nil {
		t.Fatal(err)
	}
	if err := c.AddMember("WebApp01Hosts", "AllHosts"); err != nil {
		t.Fatal(err)
	}
	if err := c.RetrieveManagedPassword("WIN-A$", "WebApp01$"); err != nil {
		t.Fatalf("a host in the group through AllHosts: %v", err)
	}
	if err := c.RetrieveManagedPassword("WIN-B$", "WebApp01"); !errors.Is(err, ErrPasswordReadDenied) {
		t.Fatalf("the other host: %v", err)
	}
	if err := c.RetrieveManagedPassword("WIN-A$", "NoSuchGMSA"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("an unknown gMSA: %v", err)
	}
	for _, comp := range c.Computers() {
		if comp.Name == "WebApp01" {
			t.Fatal("the gMSA is listed among the computers")
		}
	}
}

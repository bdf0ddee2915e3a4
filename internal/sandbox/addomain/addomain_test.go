package addomain

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/localport"
)

func startDomain(t *testing.T) *Controller {
	t.Helper()
	ports, err := localport.Reserve(1, false)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Start(Options{Domain: "corp.example.test", AdminPassword: "Adm1n!pass", Addr: fmt.Sprintf("127.0.0.1:%d", ports[0])})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	if err := c.AddOU("OU=Kubernetes," + c.BaseDN()); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"svc-join", "other-join"} {
		if _, err := c.AddUser("CN=Users,"+c.BaseDN(), u, u+"-P4ss"); err != nil {
			t.Fatal(err)
		}
		if err := c.Delegate("OU=Kubernetes,"+c.BaseDN(), u); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func wantCode(t *testing.T, err error, code uint32, text string) {
	t.Helper()
	var je *JoinError
	if !errors.As(err, &je) || je.Code != code || je.Text != text {
		t.Fatalf("error = %v, want Win32 %d %q", err, code, text)
	}
}

func TestJoinCreatesAndReusesTheAccount(t *testing.T) {
	c := startDomain(t)
	loc := Locators{c.Domain(): c}
	ou := "OU=Kubernetes," + c.BaseDN()
	var log []string
	req := JoinRequest{Domain: "corp.example.test", OU: ou, User: `CORP\svc-join`, Password: "svc-join-P4ss", ComputerName: "win-node-0",
		Log: func(l string) { log = append(log, l) }}
	dn, err := Join(context.Background(), loc, req)
	if err != nil {
		t.Fatal(err)
	}
	if dn != "CN=WIN-NODE-0,"+ou {
		t.Fatalf("dn = %s", dn)
	}
	first, ok := c.Computer("WIN-NODE-0")
	if !ok || first.DNSHostName != "win-node-0.corp.example.test" || first.Disabled {
		t.Fatalf("account = %+v, %v", first, ok)
	}
	sid, _ := c.UserSID("svc-join")
	if first.CreatorSID != sid {
		t.Fatalf("creator %s, want the join account's %s", first.CreatorSID, sid)
	}
	for _, l := range log {
		if contains(l, "svc-join-P4ss") {
			t.Fatalf("NetSetup.LOG carries the password: %q", l)
		}
	}
	if ok, err := c.IsMember("WIN-NODE-0$", "Domain Computers"); err != nil || !ok {
		t.Fatalf("a new computer is in Domain Computers (its primary group): %v %v", ok, err)
	}

	// A reset VM joins again with the same account: the account is kept.
	req.User = "svc-join@corp.example.test"
	if _, err := Join(context.Background(), loc, req); err != nil {
		t.Fatal(err)
	}
	again, _ := c.Computer("WIN-NODE-0")
	if again.SID != first.SID || len(c.Computers()) != 1 {
		t.Fatalf("rejoin replaced the account: %+v then %+v", first, again)
	}

	// Unjoin disables it; DeleteComputer removes it.
	if err := Unjoin(context.Background(), loc, c.Domain(), "svc-join", "svc-join-P4ss", "win-node-0"); err != nil {
		t.Fatal(err)
	}
	if a, _ := c.Computer("WIN-NODE-0"); !a.Disabled {
		t.Fatal("Unjoin left the account enabled")
	}
	deleted, err := DeleteComputer(context.Background(), loc, c.Domain(), "svc-join", "svc-join-P4ss", "win-node-0")
	if err != nil || !deleted {
		t.Fatal(deleted, err)
	}
	if _, ok := c.Computer("WIN-NODE-0"); ok {
		t.Fatal("the account is still there")
	}
}

func TestJoinFailsAsWindowsReports(t *testing.T) {
	c := startDomain(t)
	loc := Locators{c.Domain(): c}
	ou := "OU=Kubernetes," + c.BaseDN()
	ctx := context.Background()
	ok := JoinRequest{Domain: c.Domain(), OU: ou, User: "svc-join", Password: "svc-join-P4ss", ComputerName: "win-a"}

	bad := ok
	bad.Password = "wrong"
	_, err := Join(ctx, loc, bad)
	wantCode(t, err, ErrorLogonFailure, "The user name or password is incorrect.")

	bad = ok
	bad.Domain = "elsewhere.example.test"
	_, err = Join(ctx, loc, bad)
	wantCode(t, err, ErrorNoSuchDomain, "The specified domain either does not exist or could not be contacted.")

	bad = ok
	bad.OU = "OU=Missing," + c.BaseDN()
	_, err = Join(ctx, loc, bad)
	wantCode(t, err, ErrorFileNotFound, "The system cannot find the file specified.")

	if _, err := Join(ctx, loc, ok); err != nil {
		t.Fatal(err)
	}
	// Another join account, the same name: KB5020276 blocks the reuse.
	clash := ok
	clash.User, clash.Password = "other-join", "other-join-P4ss"
	_, err = Join(ctx, loc, clash)
	wantCode(t, err, NerrAccountReuseBlocked, "An account with the same name exists in Active Directory. Re-using the account was blocked by security policy.")
	// The same name asked for in another container.
	elsewhere := ok
	elsewhere.OU = ""
	_, err = Join(ctx, loc, elsewhere)
	wantCode(t, err, NerrUserExists, "The account already exists.")
	// An Administrator may reuse it (KB5020276's Domain Admins exception).
	admin := ok
	admin.User, admin.Password = "Administrator", "Adm1n!pass"
	if _, err := Join(ctx, loc, admin); err != nil {
		t.Fatal(err)
	}

	// Without delegation on an OU, a user cannot create computers there.
	if _, err := c.AddUser("CN=Users,"+c.BaseDN(), "plain", "plain-P4ss"); err != nil {
		t.Fatal(err)
	}
	plain := ok
	plain.User, plain.Password, plain.ComputerName = "plain", "plain-P4ss", "win-b"
	_, err = Join(ctx, loc, plain)
	wantCode(t, err, ErrorAccessDenied, "Access is denied.")
	// In CN=Computers it may, through the machine account quota, but it
	// cannot delete what it created.
	plain.OU = ""
	if _, err := Join(ctx, loc, plain); err != nil {
		t.Fatal(err)
	}
	_, err = DeleteComputer(ctx, loc, c.Domain(), "plain", "plain-P4ss", "win-b")
	wantCode(t, err, ErrorAccessDenied, "Access is denied.")

	// A stopped controller cannot be contacted.
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	_, err = Join(ctx, loc, ok)
	wantCode(t, err, ErrorNoSuchDomain, "The specified domain either does not exist or could not be contacted.")
}

func TestDirectoryOverLDAP(t *testing.T) {
	c := startDomain(t)
	conn, err := ldap.DialURL("ldap://" + c.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	search := ldap.NewSearchRequest(c.BaseDN(), ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 0, false, "(objectClass=group)", []string{"cn"}, nil)
	if _, err := conn.Search(search); !ldap.IsErrorWithCode(err, ldap.LDAPResultOperationsError) {
		t.Fatalf("an unbound search: %v, want operationsError", err)
	}
	if err := conn.Bind("CORP\\svc-join", "nope"); !ldap.IsErrorWithCode(err, ldap.LDAPResultInvalidCredentials) || !contains(err.Error(), "data 52e") {
		t.Fatalf("bind with a wrong password: %v", err)
	}
	if err := conn.Bind("CORP\\svc-join", "svc-join-P4ss"); err != nil {
		t.Fatal(err)
	}
	res, err := conn.Search(search)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Entries) != 2 {
		t.Fatalf("groups: %d entries, want Domain Admins and Domain Computers", len(res.Entries))
	}
	if _, err := conn.Search(ldap.NewSearchRequest("OU=Nope,"+c.BaseDN(), ldap.ScopeBaseObject, ldap.NeverDerefAliases, 0, 0, false, "(objectClass=*)", nil, nil)); !ldap.IsErrorWithCode(err, ldap.LDAPResultNoSuchObject) {
		t.Fatalf("a missing base: %v", err)
	}
	if _, err := conn.Search(ldap.NewSearchRequest(c.BaseDN(), ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 0, false, "(cn>=a)", nil, nil)); !ldap.IsErrorWithCode(err, ldap.LDAPResultUnwillingToPerform) {
		t.Fatalf("an unmodelled filter: %v", err)
	}
	// A user may not add a group over LDAP here.
	add := ldap.NewAddRequest("CN=G,"+c.BaseDN(), nil)
	add.Attribute("objectClass", []string{"group"})
	if err := conn.Add(add); !ldap.IsErrorWithCode(err, ldap.LDAPResultUnwillingToPerform) {
		t.Fatalf("adding a group: %v", err)
	}
}

func TestIsMemberFollowsNestedGroups(t *testing.T) {
	c := startDomain(t)
	loc := Locators{c.Domain(): c}
	if _, err := Join(context.Background(), loc, JoinRequest{Domain: c.Domain(), OU: "OU=Kubernetes," + c.BaseDN(), User: "svc-join", Password: "svc-join-P4ss", ComputerName: "WIN-A"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddGroup("CN=Users,"+c.BaseDN(), "WebApp01Hosts"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddGroup("CN=Users,"+c.BaseDN(), "AllHosts"); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.IsMember("WIN-A$", "WebApp01Hosts"); err != nil || ok {
		t.Fatalf("before: %v %v", ok, err)
	}
	if err := c.AddMember("AllHosts", "WIN-A$"); err != nil {
		t.Fatal(err)
	}
	if err := c.AddMember("WebApp01Hosts", "AllHosts"); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.IsMember("WIN-A$", "WebApp01Hosts"); err != nil || !ok {
		t.Fatalf("through AllHosts: %v %v", ok, err)
	}
	if _, err := c.IsMember("WIN-Z$", "WebApp01Hosts"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("an unknown computer: %v", err)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

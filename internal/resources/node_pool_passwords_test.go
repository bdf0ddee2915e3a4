package resources_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/adminpass"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox"
)

// TestAccNodePool_memberPasswords: the members of a pool, cloned with one
// admin_password_wo, end with different Administrator passwords on their
// simulated hosts (each its own, derived from admin_password_wo and the
// member's name: adminpass.ForNode), none of them admin_password_wo
// itself, so one member's NT hash opens no other.
//
// The same pool joins the sandbox's Active Directory domain (one image and
// two members for both checks): both members are computer accounts in the
// OU; destroying the pool deletes them; and a pool whose join account has a
// wrong password fails its create with Windows' message, naming the join
// account's setting.
func TestAccNodePool_memberPasswords(t *testing.T) {
	acctest.PreCheck(t)
	acctest.RequireSandbox(t, "reads the simulated hosts' Administrator passwords and the sandbox's domain")
	dom := acctest.Sandbox.Domain
	// Before NewCLI: its destroy at the end runs with them still set.
	t.Setenv("WINDOWS_AD_JOIN_USER", dom.JoinUser)
	t.Setenv("WINDOWS_AD_JOIN_PASSWORD", dom.JoinPassword)
	t.Setenv("WINDOWS_AD_LDAP_URL", "ldap://"+dom.Addr())
	image := acctest.Name("img-pw")
	prefix := fmt.Sprintf("pw%d", acctest.Seq()%100000)
	ad := fmt.Sprintf("  active_directory = {\n    domain = %q\n    ou     = %q\n  }\n", dom.Domain(), sandbox.ADOU())
	config := nodePoolConfig(image, prefix, 2, "windows_golden_image.test.template_path", "", ad)
	cli := acctest.NewCLI(t)
	if _, err := cli.Apply(config); err != nil {
		t.Fatal(err)
	}
	_, plan := planOK(t, cli, config)
	seen := map[string]string{}
	for i := range 2 {
		name := poolMemberAt(t, plan, i)["name"].(string)
		host := acctest.Sandbox.Hosts.ByName(strings.ToUpper(name))
		if host == nil {
			t.Fatalf("no simulated host %s", name)
		}
		got := host.Config().AdminPassword
		if got == acctest.Sandbox.AdminPassword {
			t.Errorf("%s has admin_password_wo itself as its Administrator password", name)
		}
		if want := adminpass.ForNode(acctest.Sandbox.AdminPassword, name, "Administrator"); got != want {
			t.Errorf("%s: the host's Administrator password is not the one derived for it", name)
		}
		if other, ok := seen[got]; ok {
			t.Errorf("%s and %s share an Administrator password", name, other)
		}
		seen[got] = name
	}

	// Both members joined: their computer accounts are in the OU.
	var names []string
	for i := range 2 {
		name := strings.ToUpper(poolMemberAt(t, plan, i)["name"].(string))
		names = append(names, name)
		acct, ok := dom.Computer(name)
		if !ok || acct.DN != "CN="+name+","+sandbox.ADOU() || acct.Disabled {
			t.Errorf("%s's computer account: %+v (found %v), want an enabled account in %s", name, acct, ok, sandbox.ADOU())
		}
	}

	// gMSA pods on the domain-joined members (gmsa_pool_test.go).
	checkGMSAOnMembers(t, cli, config, names)

	// The pool destroyed (the image and the networking stay): no account left.
	imageOnly := acctest.NetworkingConfig("kube-system", "flannel", "  allow_destroy_with_nodes = true\n") + acctest.GoldenImageConfig(image, nil)
	if out, err := cli.Apply(imageOnly); err != nil {
		t.Fatalf("destroying the pool: %v\n%s", err, out)
	}
	for _, name := range names {
		if acct, ok := dom.Computer(name); ok {
			t.Errorf("destroying the pool left %s's computer account: %+v", name, acct)
		}
	}

	// A wrong join password: the customization succeeds (as vCenter reports
	// it), the join does not, and the create says so.
	t.Setenv("WINDOWS_AD_JOIN_PASSWORD", "not-"+dom.JoinPassword)
	wrong := nodePoolConfig(image, prefix+"w", 1, "windows_golden_image.test.template_path", "", ad)
	out, err := cli.Apply(wrong)
	if err == nil {
		t.Fatalf("a join with a wrong password succeeded:\n%s", out)
	}
	for _, want := range []string{"The user name or password is incorrect.", "active_directory.join_password", "0x52e"} {
		if !strings.Contains(out, want) {
			t.Errorf("the failed join's error does not say %q:\n%s", want, out)
		}
	}
	if i := strings.Index(out, "joining the domain"); i >= 0 {
		t.Logf("the refused join, as the CLI printed it: %s", out[i:min(len(out), i+400)])
	}
	if strings.Contains(out, "not-"+dom.JoinPassword) {
		t.Errorf("the error carries the join password:\n%s", out)
	}
}

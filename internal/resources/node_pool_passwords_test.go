package resources_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/adminpass"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/addomain"
)

// TestAccNodePool_memberPasswords: the members of a pool, cloned with one
// admin_password_wo, end with different Administrator passwords on their
// simulated hosts (each its own, derived from admin_password_wo and the
// member's name: adminpass.ForNode), none of them admin_password_wo
// itself, so one member's NT hash opens no other.
//
// The same pool joins the sandbox's Active Directory domain (one image and
// two members for both checks): both members are computer accounts in the
// OU; destroying the pool deletes them (over LDAPS, the provider's ldap_url
// and ca_file); and a pool whose join account has a wrong password fails its
// create with Windows' message, naming the join account's setting.
func TestAccNodePool_memberPasswords(t *testing.T) {
	acctest.PreCheck(t)
	acctest.RequireSandbox(t, "reads the simulated hosts' Administrator passwords and the sandbox's domain")
	dom := acctest.Sandbox.Domain
	// Before NewCLI: its destroy at the end runs with them still set.
	t.Setenv("WINDOWS_AD_JOIN_USER", dom.JoinUser)
	t.Setenv("WINDOWS_AD_JOIN_PASSWORD", dom.JoinPassword)
	// The accounts are removed over LDAPS, verified with the sandbox's CA.
	t.Setenv("WINDOWS_AD_LDAP_URL", "ldaps://"+dom.LDAPSAddr())
	t.Setenv("WINDOWS_AD_CA_FILE", acctest.Sandbox.CAFile)
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

	t.Setenv("WINDOWS_AD_JOIN_PASSWORD", dom.JoinPassword)
	checkNameClashAndRejoin(t, cli, image, prefix, ad)
}

// checkNameClashAndRejoin, through the CLI with windows_node (whose names,
// unlike a pool member's, are known before the apply):
//
//   - two nodes whose computer names the domain already holds, created by
//     another account in the nodes' OU (NERR_AccountReuseBlockedByPolicy
//     2732, KB5020276) and in CN=Computers (NERR_UserExists 2224), fail
//     their creates with Windows' message and the setting to fix; their VMs
//     are in the state, tainted (not left outside Terraform's knowledge);
//   - destroying them keeps the accounts their joins failed on (other
//     computers', which they never joined with);
//   - once the 2732 clash is fixed as its message says (the other account
//     deleted), the node of that name is created and joins;
//   - the joined node's VM reset (ResetVM_Task) comes back Ready with the
//     same computer account (same DN and SID, enabled), and so does the
//     provider's re-join after its Node was deleted (the join steps, the
//     domain-joined check among them, run again on the same VM);
//   - destroying it deletes its account, and only its.
func checkNameClashAndRejoin(t *testing.T, cli *acctest.CLI, image, prefix, ad string) {
	ctx := context.Background()
	dom := acctest.Sandbox.Domain
	loc := addomain.Locators{dom.Domain(): dom.Controller}
	other, otherPassword := "svc-other-"+prefix, "0ther!"+prefix
	if _, err := dom.AddUser("CN=Users,"+dom.BaseDN(), other, otherPassword); err != nil {
		t.Fatal(err)
	}
	if err := dom.Delegate(sandbox.ADOU(), other); err != nil {
		t.Fatal(err)
	}
	reuse, exists := prefix+"-ka", prefix+"-kb"
	for name, ou := range map[string]string{reuse: sandbox.ADOU(), exists: ""} {
		if _, err := addomain.Join(ctx, loc, addomain.JoinRequest{Domain: dom.Domain(), OU: ou, User: other, Password: otherPassword, ComputerName: name}); err != nil {
			t.Fatalf("the other computer %s: %v", name, err)
		}
	}
	clashing := map[string]addomain.Computer{}
	for _, name := range []string{reuse, exists} {
		clashing[name], _ = dom.Computer(strings.ToUpper(name))
	}
	nodes := func(names ...string) string {
		return acctest.NetworkingConfig("kube-system", "flannel", "  allow_destroy_with_nodes = true\n") +
			acctest.NodeConfigWithout(image, names, "  networking_id = windows_node_networking.test.id\n"+ad)
	}

	start := time.Now()
	out, err := cli.Apply(nodes(reuse, exists))
	if err == nil {
		t.Fatalf("joins on clashing computer names succeeded:\n%s", out)
	}
	t.Logf("the clashing creates failed in %s", time.Since(start).Round(time.Second))
	expectOutput(t, out,
		"Re-using the account was blocked by security policy.", "0xaac", "delete it, or join with the account that created it",
		"The account already exists.", "0x8b0", "is in another OU than active_directory.ou")
	st, err := cli.State()
	if err != nil {
		t.Fatal(err)
	}
	tainted := map[string]bool{}
	if st.Values != nil {
		for _, r := range st.Values.RootModule.Resources {
			if r.Type == "windows_node" {
				tainted[r.AttributeValues["name"].(string)] = r.Tainted
			}
		}
	}
	for _, name := range []string{reuse, exists} {
		if !tainted[name] {
			t.Errorf("%s is not in the state as tainted (%v)", name, tainted)
		}
		if id, err := acctest.VMAt(t, name); err != nil || id == "" {
			t.Errorf("%s's VM: %q %v", name, id, err)
		}
	}

	// Both nodes destroyed: the accounts their joins failed on are other
	// computers', and stay as they were.
	imageOnly := acctest.NetworkingConfig("kube-system", "flannel", "  allow_destroy_with_nodes = true\n") + acctest.GoldenImageConfig(image, nil)
	start = time.Now()
	out, err = cli.Apply(imageOnly)
	if err != nil {
		t.Fatalf("destroying the nodes whose joins failed: %v\n%s", err, out)
	}
	t.Logf("destroying them took %s", time.Since(start).Round(time.Second))
	if n := strings.Count(out, "Computer account kept in the domain"); n != 2 {
		t.Errorf("the destroy warned of %d kept accounts, want 2:\n%s", n, out)
	}
	expectOutput(t, out, "CN="+strings.ToUpper(reuse)+","+sandbox.ADOU()+" was created by another account than the join account",
		"CN="+strings.ToUpper(exists)+",CN=Computers,"+dom.BaseDN()+" is not in the node's container")
	for name, was := range clashing {
		if id, err := acctest.VMAt(t, name); err != nil || id != "" {
			t.Errorf("%s's VM after its destroy: %q %v", name, id, err)
		}
		if got, ok := dom.Computer(strings.ToUpper(name)); !ok || got != was {
			t.Errorf("destroying the node whose join failed on another computer's account changed it: %+v (found %v), was %+v", got, ok, was)
		}
	}

	// The fix the 2732 message names: the other computer's account deleted
	// (by its creator); the node then joins.
	if _, err := addomain.DeleteComputer(ctx, loc, dom.Domain(), other, otherPassword, reuse); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if out, err := cli.Apply(nodes(reuse)); err != nil {
		t.Fatalf("after the clash was fixed: %v\n%s", err, out)
	}
	t.Logf("creating the node once its name was free took %s", time.Since(start).Round(time.Second))
	joinSID, err := dom.UserSID(dom.JoinUser)
	if err != nil {
		t.Fatal(err)
	}
	joined, ok := dom.Computer(strings.ToUpper(reuse))
	if !ok || joined.DN != "CN="+strings.ToUpper(reuse)+","+sandbox.ADOU() || joined.CreatorSID != joinSID || joined.Disabled {
		t.Fatalf("%s's account after its join: %+v (found %v)", reuse, joined, ok)
	}
	sameAccount := func(when string) {
		t.Helper()
		if got, ok := dom.Computer(strings.ToUpper(reuse)); !ok || got != joined {
			t.Errorf("%s: %s's computer account is %+v (found %v), was %+v", when, reuse, got, ok, joined)
		}
	}

	// A VM reset: Windows keeps its domain membership (the machine
	// account's secret is on its disk), so the node comes back with it.
	k := acctest.Kube(t)
	n, err := k.CoreV1().Nodes().Get(ctx, reuse, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	resetVM(t, k, reuse, n.Status.NodeInfo.BootID)
	t.Logf("the reset node was Ready again in %s", time.Since(start).Round(time.Second))
	sameAccount("after a VM reset")

	// The provider's re-join of the same VM (its Node deleted).
	if err := k.CoreV1().Nodes().Delete(ctx, reuse, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if out, err := cli.Apply(nodes(reuse)); err != nil {
		t.Fatalf("re-joining %s: %v\n%s", reuse, err, out)
	}
	t.Logf("the re-join took %s", time.Since(start).Round(time.Second))
	if _, err := k.CoreV1().Nodes().Get(ctx, reuse, metav1.GetOptions{}); err != nil {
		t.Errorf("after the re-join: %v", err)
	}
	sameAccount("after the provider's re-join")

	if out, err := cli.Apply(imageOnly); err != nil {
		t.Fatalf("destroying %s: %v\n%s", reuse, err, out)
	}
	if got, ok := dom.Computer(strings.ToUpper(reuse)); ok {
		t.Errorf("destroying %s left its account: %+v", reuse, got)
	}
	if _, ok := dom.Computer(strings.ToUpper(exists)); !ok {
		t.Errorf("destroying %s deleted the other computer %s's account", reuse, exists)
	}
	// The other computer's account goes as its administrator removes it.
	if _, err := addomain.DeleteComputer(ctx, loc, dom.Domain(), "Administrator", dom.AdminPassword, exists); err != nil {
		t.Fatal(err)
	}
}

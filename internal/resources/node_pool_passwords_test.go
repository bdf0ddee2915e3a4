package resources_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/adminpass"
)

// TestAccNodePool_memberPasswords: the members of a pool, cloned with one
// admin_password_wo, end with different Administrator passwords on their
// simulated hosts (each its own, derived from admin_password_wo and the
// member's name: adminpass.ForNode), none of them admin_password_wo
// itself, so one member's NT hash opens no other.
func TestAccNodePool_memberPasswords(t *testing.T) {
	acctest.PreCheck(t)
	acctest.RequireSandbox(t, "reads the simulated hosts' Administrator passwords")
	image := acctest.Name("img-pw")
	prefix := fmt.Sprintf("pw%d", acctest.Seq()%100000)
	config := nodePoolConfig(image, prefix, 2, "windows_golden_image.test.template_path", "", "")
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
}

package resources_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
	"github.com/wincluster/terraform-provider-windows/internal/winpool"
)

// TestAccNodePool_plan reads what the plan tells the user, through the real
// CLI: a roll names every member it replaces and why, with the bounds it
// keeps; a label change rolls nothing; a smaller pool names the members
// that go; a member whose VM is gone is replaced, and the plan says so; a
// destroy says every member is drained; a move to WinRM over HTTP is a
// warning, and the member made after it joins over HTTP.
func TestAccNodePool_plan(t *testing.T) {
	acctest.PreCheck(t)
	image := acctest.Name("img")
	prefix := fmt.Sprintf("w%d", acctest.Seq()%100000)
	const tmpl = "windows_golden_image.test.template_path"
	t.Cleanup(func() {
		if vms := poolVMs(t, prefix); len(vms) > 0 {
			t.Errorf("VMs %v of the pool are left", vms)
		}
	})
	cli := acctest.NewCLI(t)
	config := func(replicas int, body string) string { return nodePoolConfig(image, prefix, replicas, tmpl, "", body) }
	if _, err := cli.Apply(config(2, "")); err != nil {
		t.Fatal(err)
	}
	nodes, err := acctest.Kube(t).CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: winpool.LabelPool + "=" + prefix})
	if err != nil || len(nodes.Items) != 2 {
		t.Fatalf("the pool's Nodes: %v (err %v)", nodes, err)
	}
	members := []string{nodes.Items[0].Name, nodes.Items[1].Name}

	out, plan := planOK(t, cli, config(2, "  num_cpus = 4\n  max_surge = 2\n"))
	expectOutput(t, out, `Warning: Windows node pool `+prefix+` replaces 2 member\(s\)`, `Replaced, in this order \(with the update revision, build.UBR, each has and`,
		`(`+members[0]+`|`+members[1]+`) \(made from an earlier revision of the pool: num_cpus changed\)`,
		`With max_surge = 2 and max_unavailable = 0, the pool has at most 4 members and at least 2 Ready ones throughout`,
		`PodDisruptionBudgets are honoured`)
	for _, m := range members {
		if !strings.Contains(out, m) {
			t.Errorf("the roll's warning does not name member %s:\n%s", m, out)
		}
	}
	expectUnknown(t, plan, poolAddr, map[string]bool{"members": true, "ready_replicas": true, "revision": false})

	out, plan = planOK(t, cli, config(2, `  labels = { "example.com/tier" = "web" }`+"\n"))
	if strings.Contains(out, "Warning: Windows node pool") {
		t.Errorf("a label change warns of a roll:\n%s", out)
	}
	expectUnknown(t, plan, poolAddr, map[string]bool{"members": false, "ready_replicas": false})

	out, _ = planOK(t, cli, config(1, ""))
	expectOutput(t, out, `Warning: Windows node pool `+prefix+` removes 1 member\(s\)`,
		`\(the pool is smaller \(the newest members go\)\)`)

	out, _ = planOKDestroy(t, cli, config(2, ""))
	expectOutput(t, out, `Warning: Windows node pool `+prefix+`: 2 members will be drained and destroyed`, `PodDisruptionBudgets are honoured`)

	// A member's VM destroyed outside Terraform.
	c := acctest.VSphere(t)
	gone, err := acctest.VMAt(t, members[0])
	if err != nil || gone == "" {
		t.Fatalf("VM of %s: %q (err %v)", members[0], gone, err)
	}
	if err := c.PowerOff(context.Background(), vsphere.VMRef(gone)); err != nil {
		t.Fatal(err)
	}
	if err := c.Destroy(context.Background(), vsphere.VMRef(gone)); err != nil {
		t.Fatal(err)
	}
	out, plan = planOK(t, cli, config(2, ""))
	expectOutput(t, out, `Warning: Windows node pool `+prefix+` replaces 1 member\(s\)`, `1. `+members[0]+` \(its VM is gone\)`)
	expectUnknown(t, plan, poolAddr, map[string]bool{"members": true})

	// The members were joined through VMware Tools (the default transport),
	// which closed their WinRM HTTP listener. Moving the pool to WinRM over
	// HTTP is warned of, not refused as windows_node refuses it: a pool
	// never dials a joined member again, and the member this apply makes
	// (for the one whose VM is gone) is a new clone joined over HTTP, whose
	// 5985 stays open while the kept member's stays closed.
	overHTTP := config(2, "  transport = "+acctest.WinRMOverHTTP()+"\n")
	out, _ = planOK(t, cli, overHTTP)
	expectOutput(t, out, `Warning: New pool members will keep WinRM over HTTP open`, `transport: the members joined with type = "vmtools"`)
	if out, err := cli.Apply(overHTTP); err != nil {
		t.Fatalf("the pool's apply over WinRM HTTP: %v\n%s", err, out)
	}
	ips := poolMemberIPs(t, cli)
	if len(ips) != 2 || ips[members[1]] == "" {
		t.Fatalf("the pool's members after the apply: %v (want %s and a new one)", ips, members[1])
	}
	for name, ip := range ips {
		addr := net.JoinHostPort(ip, os.Getenv("SANDBOX_WINRM_PORT"))
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err == nil {
			_ = c.Close()
		}
		switch open := err == nil; {
		case name == members[1] && open:
			t.Errorf("member %s, joined through VMware Tools, accepts WinRM HTTP at %s", name, addr)
		case name != members[1] && !open:
			t.Errorf("member %s, joined over WinRM HTTP, does not accept it at %s: %v", name, addr, err)
		}
	}
}

// poolMemberIPs are the pool's members in the state, name -> ip_address.
func poolMemberIPs(t *testing.T, cli *acctest.CLI) map[string]string {
	t.Helper()
	st, err := cli.State()
	if err != nil {
		t.Fatal(err)
	}
	ips := map[string]string{}
	if st.Values == nil || st.Values.RootModule == nil {
		return ips
	}
	for _, r := range st.Values.RootModule.Resources {
		if r.Address != poolAddr {
			continue
		}
		list, _ := r.AttributeValues["members"].([]any)
		for _, m := range list {
			member, _ := m.(map[string]any)
			name, _ := member["name"].(string)
			ip, _ := member["ip_address"].(string)
			ips[name] = ip
		}
	}
	return ips
}

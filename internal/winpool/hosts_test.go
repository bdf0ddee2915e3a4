package winpool_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/winnode"
	"github.com/wincluster/terraform-provider-windows/internal/winpool"
)

// drs is an in-memory implementation of winpool's Hosts: the rules by
// resource pool and name, as SetVMAntiAffinity leaves them (fewer than two
// VMs remove one), and the calls.
type drs struct {
	rules map[string][]string // "<resource pool>/<name>" -> VMs
	calls int
	fail  error
}

func (d *drs) SetVMAntiAffinity(_ context.Context, resourcePoolID, name string, vmIDs []string) error {
	d.calls++
	if d.fail != nil {
		return d.fail
	}
	key := resourcePoolID + "/" + name
	if len(vmIDs) < 2 {
		delete(d.rules, key)
		return nil
	}
	d.rules[key] = slices.Clone(vmIDs)
	return nil
}

// TestSpreadOverHosts keeps the pool's rule in step with anti_affinity:
// the VMs of the members that have one, on the resource pool's cluster;
// removed when it is turned off; vCenter left alone when it was never on.
func TestSpreadOverHosts(t *testing.T) {
	member := func(name, vm string, h winpool.Health) winpool.Member {
		return winpool.Member{Name: name, Identity: winnode.Identity{VMID: vm}, Health: h}
	}
	members := []winpool.Member{
		member("web-aaaaa", "vm-1", winpool.Ready),
		member("web-bbbbb", "vm-2", winpool.NotReady),
		member("web-ccccc", "", winpool.NotJoined),     // its create failed before the clone
		member("web-ddddd", "vm-4", winpool.VMMissing), // destroyed outside Terraform
		member("web-eeeee", "vm-5", winpool.NotJoined), // its Node is gone, its VM is not
	}
	const rule = "resgroup-9/windows-node-pool-web"
	cases := []struct {
		name    string
		on, had bool
		members []winpool.Member
		before  []string // the rule's VMs before; nil: none
		want    []string // after; nil: none
		calls   int
	}{
		{name: "on", on: true, members: members, want: []string{"vm-1", "vm-2", "vm-5"}, calls: 1},
		{name: "on, members changed", on: true, had: true, members: members[:2], before: []string{"vm-1", "vm-2", "vm-5"},
			want: []string{"vm-1", "vm-2"}, calls: 1},
		{name: "on, one member left", on: true, had: true, members: members[:1], before: []string{"vm-1", "vm-2"}, calls: 1},
		{name: "turned off", had: true, members: members, before: []string{"vm-1", "vm-2"}, calls: 1},
		{name: "never on", members: members, before: []string{"vm-7", "vm-8"}, want: []string{"vm-7", "vm-8"}},
		{name: "a new pool removes a rule of its name left behind", had: true, members: members,
			before: []string{"vm-7", "vm-8"}, calls: 1},
		{name: "destroyed", had: true, before: []string{"vm-1", "vm-2"}, calls: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hosts := &drs{rules: map[string][]string{}}
			if c.before != nil {
				hosts.rules[rule] = c.before
			}
			p := winpool.Pool{Prefix: "web", Template: winnode.Spec{ResourcePoolID: "resgroup-9"}, AntiAffinity: c.on}
			if err := winpool.SpreadOverHosts(t.Context(), hosts, p, c.members, c.had); err != nil {
				t.Fatal(err)
			}
			if got := hosts.rules[rule]; !slices.Equal(got, c.want) {
				t.Errorf("rule %v, want %v", got, c.want)
			}
			if hosts.calls != c.calls {
				t.Errorf("%d calls to vCenter, want %d", hosts.calls, c.calls)
			}
		})
	}
}

// TestSpreadOverHostsFails names the attribute whose rule failed.
func TestSpreadOverHostsFails(t *testing.T) {
	boom := errors.New("resource pool resgroup-9 belongs to a standalone host")
	hosts := &drs{rules: map[string][]string{}, fail: boom}
	p := winpool.Pool{Prefix: "web", Template: winnode.Spec{ResourcePoolID: "resgroup-9"}, AntiAffinity: true}
	err := winpool.SpreadOverHosts(t.Context(), hosts, p, nil, false)
	if !errors.Is(err, boom) || err.Error() != "anti_affinity: "+boom.Error() {
		t.Errorf("err = %v, want anti_affinity: %v", err, boom)
	}
}

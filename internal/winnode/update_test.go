package winnode_test

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	vimtypes "github.com/vmware/govmomi/vim25/types"

	"github.com/wincluster/terraform-provider-windows/internal/guest/guesttest"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
	"github.com/wincluster/terraform-provider-windows/internal/winnode"
)

// sequence records, across the in-memory vCenter and cluster, the order in
// which the named operations start ("vs.Reconfigure", "k.FindNode").
type sequence struct {
	mu  sync.Mutex
	ops []string
}

func (s *sequence) watch(w *world, vsOps, kOps []string) {
	for _, op := range vsOps {
		w.vs.at[op] = func() { s.add("vs." + op) }
	}
	for _, op := range kOps {
		w.k.at[op] = func() { s.add("k." + op) }
	}
}

func (s *sequence) add(op string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ops = append(s.ops, op)
}

// first is the order of the first call of each operation.
func (s *sequence) first() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, op := range s.ops {
		if !slices.Contains(out, op) {
			out = append(out, op)
		}
	}
	return out
}

// updateRequest is an update of win-1 that changes nothing but its settings.
func updateRequest(id winnode.Identity) winnode.UpdateRequest {
	spec := testSpec()
	spec.Labels = map[string]string{"example.com/pool": "api"}
	return winnode.UpdateRequest{Spec: spec, Identity: id, WindowsBuild: "10.0.20348"}
}

// TestUpdate runs a node's update against the in-memory vCenter, cluster
// and guest: the hardware first (CPUs and memory, then the disk), then the
// end of an unfinished power cycle, then a join again or the settings of the
// Node as it is, then the VM read. A failure stops it at its stage.
func TestUpdate(t *testing.T) {
	vsOps := []string{"Reconfigure", "GrowDisk", "PowerOn", "WaitForIP", "ReadVM"}
	kOps := []string{"FindNode", "CordonNode", "ApplyNodeSettings", "ObservedNetworkingMode", "CreateBootstrapToken"}
	resize := winnode.PlanHardware(
		winnode.Sizing{NumCPUs: winnode.Size{Value: 4}, MemoryMB: winnode.Size{Value: 8192}, DiskSizeGB: winnode.Size{Value: 80}},
		winnode.Sizing{NumCPUs: winnode.Size{Value: 8}, MemoryMB: winnode.Size{Value: 8192}, DiskSizeGB: winnode.Size{Value: 120}})
	cases := []struct {
		name  string
		setup func(w *world, req *winnode.UpdateRequest)
		want  string   // the error, a regular expression
		order []string // the first call of each watched operation, in order
		// What the result holds.
		joined, node bool
		mode         string
		vm           bool
		progress     string // a progress stage reported
		// unstaged: the error is the cluster's own, as the update has
		// always reported it (no stage named).
		unstaged bool
	}{
		{name: "settings only",
			order: []string{"k.FindNode", "k.ApplyNodeSettings", "vs.ReadVM"}, node: true, vm: true},
		{name: "hardware, in place", setup: func(w *world, req *winnode.UpdateRequest) { w.vs.hotAdd = true; req.Hardware = resize },
			order: []string{"vs.Reconfigure", "vs.GrowDisk", "k.FindNode", "k.ApplyNodeSettings", "vs.ReadVM"}, node: true, vm: true},
		{name: "hardware, power cycle", setup: func(_ *world, req *winnode.UpdateRequest) { req.Hardware = resize },
			order: []string{"vs.Reconfigure", "k.FindNode", "vs.PowerOn", "vs.ReadVM", "k.CordonNode", "vs.GrowDisk", "k.ApplyNodeSettings"},
			node:  true, vm: true},
		{name: "an earlier power cycle unfinished", setup: func(w *world, req *winnode.UpdateRequest) {
			markCordoned(w)
			_ = w.vs.setPower(req.Identity.VMID, vimtypes.VirtualMachinePowerStatePoweredOff)
		}, order: []string{"k.FindNode", "vs.ReadVM", "vs.PowerOn", "k.CordonNode", "k.ApplyNodeSettings"}, node: true, vm: true,
			progress: "power on after an unfinished power cycle"},
		{name: "adopting the networking's mode", setup: func(_ *world, req *winnode.UpdateRequest) { req.AdoptNetworkingMode = true },
			order: []string{"k.FindNode", "k.ApplyNodeSettings", "k.ObservedNetworkingMode", "vs.ReadVM"}, node: true, mode: "flannel", vm: true},
		{name: "the Node is gone", setup: func(w *world, req *winnode.UpdateRequest) {
			delete(w.k.nodes, "win-1")
			_ = w.vs.setPower(req.Identity.VMID, vimtypes.VirtualMachinePowerStatePoweredOff)
			req.Rejoin = winnode.RejoinNodeGone
		}, order: []string{"k.FindNode", "vs.ReadVM", "vs.PowerOn", "vs.WaitForIP", "k.ObservedNetworkingMode", "k.CreateBootstrapToken", "k.ApplyNodeSettings"},
			joined: true, vm: true, progress: "the Node is gone from the cluster; joining again"},
		{name: "the networking changed", setup: func(_ *world, req *winnode.UpdateRequest) { req.Rejoin = winnode.RejoinNetworking },
			order:  []string{"k.FindNode", "vs.ReadVM", "vs.WaitForIP", "k.ObservedNetworkingMode", "k.CreateBootstrapToken", "k.ApplyNodeSettings"},
			joined: true, vm: true, progress: "its networking changed; joining again in place"},

		{name: "reconfigure fails", setup: func(w *world, req *winnode.UpdateRequest) { w.vs.fail["Reconfigure"] = errBoom; req.Hardware = resize },
			want: `^reconfiguring the VM: boom$`, order: []string{"vs.Reconfigure"}},
		{name: "disk fails", setup: func(w *world, req *winnode.UpdateRequest) {
			w.vs.hotAdd = true
			w.vs.fail["GrowDisk"] = errBoom
			req.Hardware = resize
		}, want: `^growing the disk: boom$`, order: []string{"vs.Reconfigure", "vs.GrowDisk"}},
		{name: "resuming fails", setup: func(w *world, _ *winnode.UpdateRequest) { w.k.fail["FindNode"] = errBoom },
			want: `^reading the Node: boom$`, order: []string{"k.FindNode"}},
		{name: "power-on before the join fails", setup: func(w *world, req *winnode.UpdateRequest) {
			delete(w.k.nodes, "win-1")
			_ = w.vs.setPower(req.Identity.VMID, vimtypes.VirtualMachinePowerStatePoweredOff)
			w.vs.fail["PowerOn"] = errBoom
			req.Rejoin = winnode.RejoinNodeGone
		}, want: `^powering the VM on: boom$`, order: []string{"k.FindNode", "vs.ReadVM", "vs.PowerOn"}},
		{name: "the join fails", setup: func(w *world, req *winnode.UpdateRequest) {
			w.k.fail["CreateBootstrapToken"] = errBoom
			req.Rejoin = winnode.RejoinNetworking
		}, want: `^joining the node again: creating a bootstrap token: boom$`,
			order: []string{"k.FindNode", "vs.ReadVM", "vs.WaitForIP", "k.ObservedNetworkingMode", "k.CreateBootstrapToken"}},
		{name: "settings fail", setup: func(w *world, _ *winnode.UpdateRequest) { w.k.fail["ApplyNodeSettings"] = errBoom },
			want: `^setting labels and taints: boom$`, order: []string{"k.FindNode", "k.ApplyNodeSettings"}},
		{name: "the networking's mode unread", setup: func(w *world, req *winnode.UpdateRequest) {
			w.k.fail["ObservedNetworkingMode"] = errBoom
			req.AdoptNetworkingMode = true
		}, want: `^boom$`, unstaged: true, order: []string{"k.FindNode", "k.ApplyNodeSettings", "k.ObservedNetworkingMode"}, node: true},
		{name: "the VM unread at the end", setup: func(w *world, _ *winnode.UpdateRequest) { w.vs.fail["ReadVM"] = errBoom },
			order: []string{"k.FindNode", "k.ApplyNodeSettings", "vs.ReadVM"}, node: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, id := joined(t)
			w.progress = nil
			req := updateRequest(id)
			if c.setup != nil {
				c.setup(w, &req)
			}
			var seq sequence
			seq.watch(w, vsOps, kOps)
			res, err := w.m.Update(t.Context(), req)
			switch {
			case c.want == "" && err != nil:
				t.Fatal(err)
			case c.unstaged:
				if err == nil || !regexp.MustCompile(c.want).MatchString(err.Error()) {
					t.Errorf("error %v, want it to match %s", err, c.want)
				}
			case c.want != "":
				checkErr(t, err, c.want)
			}
			if got := seq.first(); !slices.Equal(got, c.order) {
				t.Errorf("calls %v, want %v", got, c.order)
			}
			if (res.Joined != nil) != c.joined || (res.Node != nil) != c.node || res.NetworkingMode != c.mode || (res.VM != nil) != c.vm {
				t.Errorf("result: joined %v, Node %v, mode %q, VM %v; want %v, %v, %q, %v",
					res.Joined != nil, res.Node != nil, res.NetworkingMode, res.VM != nil, c.joined, c.node, c.mode, c.vm)
			}
			if c.progress != "" && !slices.Contains(w.progress, c.progress) {
				t.Errorf("progress %q, want %q among it", w.progress, c.progress)
			}
			if c.want != "" {
				return
			}
			if got := w.nodeState(); got != (nodeState{exists: true}) {
				t.Errorf("Node %+v, want it uncordoned and unmarked", got)
			}
			if got := w.vs.power(id.VMID); got != vimtypes.VirtualMachinePowerStatePoweredOn {
				t.Errorf("VM %s, want it powered on", got)
			}
		})
	}
}

// TestUpdateSettings: without a join the Node gets the configured labels,
// the recorded Windows build, the providerID and the taints.
func TestUpdateSettings(t *testing.T) {
	w, id := joined(t)
	req := updateRequest(id)
	res, err := w.m.Update(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	n := w.k.node("win-1")
	if n.Labels["example.com/pool"] != "api" || n.Labels[winnode.LabelWindowsBuild] != "10.0.20348" {
		t.Errorf("labels %v: want the configured ones and the recorded build", n.Labels)
	}
	if n.Spec.ProviderID != id.ProviderID() || len(n.Spec.Taints) != 1 || n.Spec.Taints[0].Key != "os" {
		t.Errorf("providerID %q, taints %v", n.Spec.ProviderID, n.Spec.Taints)
	}
	if res.Node == nil || res.Node.Labels["example.com/pool"] != "api" {
		t.Errorf("result Node %v: want the Node as set", res.Node)
	}
	if w.k.called("ObservedNetworkingMode") {
		t.Error("the networking's mode was read, but not asked for")
	}
}

// TestUpdateJoinsWithTheRecordedIdentity: a join again keeps the VM the
// state records, and reports the join.
func TestUpdateJoinsWithTheRecordedIdentity(t *testing.T) {
	w, id := joined(t)
	delete(w.k.nodes, "win-1")
	req := updateRequest(id)
	req.Rejoin = winnode.RejoinNodeGone
	res, err := w.m.Update(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Joined.Identity != id || res.Joined.Node == nil || res.Joined.IP == "" {
		t.Errorf("joined %+v: want the VM %+v, its Node and IP", res.Joined, id)
	}
	if w.vs.called("CloneNode") || w.vs.called("PowerOn") {
		t.Errorf("vCenter calls %v: a join again neither clones nor powers on a running VM", w.vs.Calls())
	}
	if n := w.k.node("win-1"); n == nil || !strings.EqualFold(n.Spec.ProviderID, id.ProviderID()) {
		t.Errorf("Node %v: want it registered again with the VM's providerID", n)
	}
}

// TestUpdateRepair: a repair runs the repair step over the node's transport
// and waits for the Node to be Ready before the settings; a failing step
// stops the update with its output.
func TestUpdateRepair(t *testing.T) {
	w, id := joined(t)
	req := updateRequest(id)
	req.Repair = true
	if _, err := w.m.Update(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if ran := w.g.Ran(); !slices.Contains(ran, "repair-services") {
		t.Errorf("steps run %v: no repair-services", ran)
	}
	if !slices.Contains(w.progress, "repair") {
		t.Errorf("progress %v: no repair", w.progress)
	}

	w, id = joined(t)
	w.g.Steps["repair-services"] = guesttest.Reply{ExitCode: 1, Stderr: "Start-Service : Service 'kubelet' cannot be started"}
	req = updateRequest(id)
	req.Repair = true
	_, err := w.m.Update(t.Context(), req)
	if err == nil || !strings.Contains(err.Error(), `repair step "repair-services" exited with code 1`) || !strings.Contains(err.Error(), "cannot be started") {
		t.Errorf("a failing repair: %v", err)
	}
}

// TestUpdateSite: tags, custom attributes and the annotation change in
// place, on the recorded VM, and an update that changes none of them
// touches none.
func TestUpdateSite(t *testing.T) {
	w, id := joined(t)
	req := updateRequest(id)
	if _, err := w.m.Update(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if w.vs.called("SetMetadata") || w.vs.called("SetAnnotation") {
		t.Errorf("an update without a site change set the VM's metadata: %v", w.vs.Calls())
	}
	had := winnode.SiteVM{Metadata: vsphere.Metadata{Tags: []string{"t1"}}}
	req.Site = winnode.SiteChange{Had: had, Want: winnode.SiteVM{Annotation: ptr("storage node"),
		Metadata: vsphere.Metadata{Tags: []string{"t2"}, CustomAttributes: map[string]string{"101": "worker"}}}}
	if _, err := w.m.Update(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	calls := strings.Join(w.vs.Calls(), "\n")
	for _, want := range []string{"SetAnnotation " + id.VMID + " storage node", "SetMetadata " + id.VMID + " [t2] map[101:worker]"} {
		if !strings.Contains(calls, want) {
			t.Errorf("calls %s\nwant %q", calls, want)
		}
	}
	// Unset: the provider's own note again.
	req.Site = winnode.SiteChange{Had: winnode.SiteVM{Annotation: ptr("storage node")}}
	if _, err := w.m.Update(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(w.vs.Calls(), "\n"), "SetAnnotation "+id.VMID+" Kubernetes Windows node win-1 (terraform-provider-windows)") {
		t.Errorf("an annotation unset: calls %v, want the provider's own note", w.vs.Calls())
	}
	// Notes cleared outside Terraform (a refresh read ""): the provider's
	// own note again, though the configuration left it unset before too.
	req.Site = winnode.SiteChange{Had: winnode.SiteVM{Annotation: ptr("")}}
	n := len(w.vs.Calls())
	if _, err := w.m.Update(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(w.vs.Calls()[n:], "\n"), "SetAnnotation "+id.VMID+" Kubernetes Windows node win-1") {
		t.Errorf("notes cleared outside: calls %v, want the provider's own note set again", w.vs.Calls()[n:])
	}
	// The tags SetMetadata attached read back.
	tags, err := w.m.ReadTags(t.Context(), id.VMID)
	if err != nil || !slices.Equal(tags, []string{"t2"}) {
		t.Errorf("ReadTags = %v, %v; want [t2]", tags, err)
	}
}

func ptr(s string) *string { return &s }

package resources

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/winpool"
)

// The plan's warning of a roll names the members in order, why each goes
// (with the attributes that changed), and the bounds the roll keeps.
func TestDescribeRollout(t *testing.T) {
	p := winpool.Pool{Prefix: "web", Policy: winpool.Policy{Replicas: 3, MaxParallel: 10, MaxSurge: 2, MaxUnavailable: 1}}
	r := winpool.Rollout{
		Replace: []winpool.Change{{Member: "web-gone1", Reason: winpool.ReasonVMMissing}, {Member: "web-old01", Reason: winpool.ReasonOutdated}},
		Remove:  []winpool.Change{{Member: "web-old02", Reason: winpool.ReasonOutdated}},
		Create:  1,
	}
	summary, detail := describeRollout(p, r, []string{"template"},
		updateRevisions{Has: map[string]string{"web-old01": "10.0.20348.4405", "web-old02": "10.0.20348.4405"}, Will: "10.0.20348.4466"}, kube.DrainOptions{Timeout: 600e9, IgnoreDaemonSets: true})
	if summary != "Windows node pool web replaces 2, adds 1, removes 1 member(s)" {
		t.Errorf("summary %q", summary)
	}
	for _, want := range []string{
		"1. web-gone1 (its VM is gone): (not reported) -> 10.0.20348.4466",
		"2. web-old01 (made from an earlier revision of the pool: template changed): 10.0.20348.4405 -> 10.0.20348.4466",
		"Removed, in this order:\n  1. web-old02 (made from an earlier revision of the pool: template changed): 10.0.20348.4405",
		"Created: 1 new member(s), up to 10 at a time, at update revision 10.0.20348.4466.",
		"at most 5 members and at least 2 Ready ones",
		"PodDisruptionBudgets are honoured",
		"10m (drain.timeout)",
	} {
		if !strings.Contains(detail, want) {
			t.Errorf("the warning lacks %q:\n%s", want, detail)
		}
	}
	if _, d := describeRollout(p, winpool.Rollout{Create: 2}, nil, updateRevisions{}, kube.DrainOptions{}); strings.Contains(d, "max_surge") {
		t.Errorf("a pool that only grows warns of a roll: %s", d)
	}
	if _, d := describeRollout(p, r, nil, updateRevisions{}, kube.DrainOptions{}); !strings.Contains(d, "(not reported) -> (the new template's, known after apply)") {
		t.Errorf("a template known only after apply: %s", d)
	}
	if got := revisionsNow([]winpool.Member{{Name: "web-a", WindowsBuildFull: "10.0.20348.4405"}, {Name: "web-b"}}); !strings.Contains(got, "web-a 10.0.20348.4405, web-b (not reported)") {
		t.Errorf("revisionsNow: %q", got)
	}
}

// What members are made of decides the revision; labels, taints, drain and
// the roll settings do not, and an unknown input leaves it unknown.
func TestPoolRevision(t *testing.T) {
	ctx := context.Background()
	base := nodePoolModel{
		machineModel:   machineModel{Template: types.StringValue("/dc/vm/t1"), Folder: types.StringValue("/dc/vm/w"), NumCPUs: types.Int64Value(4)},
		FailureDomains: types.ListNull(types.ObjectType{AttrTypes: domainAttrTypes}),
	}
	rev := func(m nodePoolModel) string {
		var diags diag.Diagnostics
		r, ok := m.revision(ctx, &diags)
		if diags.HasError() || !ok {
			t.Fatalf("revision: ok %v, %v", ok, diags)
		}
		return r
	}
	r0 := rev(base)
	same := base
	same.Labels = types.MapValueMust(types.StringType, nil)
	same.MaxSurge = types.Int64Value(5)
	if rev(same) != r0 {
		t.Errorf("labels or max_surge changed the revision")
	}
	for name, change := range map[string]func(*nodePoolModel){
		"template": func(m *nodePoolModel) { m.Template = types.StringValue("/dc/vm/t2") },
		"num_cpus": func(m *nodePoolModel) { m.NumCPUs = types.Int64Value(8) },
		"password": func(m *nodePoolModel) { m.AdminPasswordWOVersion = types.Int64Value(2) },
	} {
		m := base
		change(&m)
		if rev(m) == r0 {
			t.Errorf("changing %s kept the revision", name)
		}
		if got := changedInputs(base, m); len(got) != 1 {
			t.Errorf("changing %s: changed inputs %v", name, got)
		}
	}
	unknown := base
	unknown.Template = types.StringUnknown()
	var diags diag.Diagnostics
	if _, ok := unknown.revision(ctx, &diags); ok || !slices.Equal(unknownInputs(unknown), []string{"template"}) {
		t.Errorf("an unknown template: revision known %v, unknown inputs %v", ok, unknownInputs(unknown))
	}
}

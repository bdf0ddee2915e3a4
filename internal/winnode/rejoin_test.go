package winnode

import "testing"

func TestPlanRejoin(t *testing.T) {
	cases := []struct {
		name                               string
		joined, networkingChanged, adopted bool
		want                               Rejoin
	}{
		{"nothing", true, false, false, NoRejoin},
		{"the Node is gone", false, false, false, RejoinNodeGone},
		{"the Node is gone and the networking changes", false, true, false, RejoinNodeGone},
		{"the networking changes", true, true, false, RejoinNetworking},
		{"an adopted node records its networking", true, true, true, NoRejoin},
		{"an adopted node whose Node is gone joins again", false, true, true, RejoinNodeGone},
	}
	for _, c := range cases {
		if got := PlanRejoin(c.joined, c.networkingChanged, c.adopted); got != c.want {
			t.Errorf("%s: PlanRejoin = %v, want %v", c.name, got, c.want)
		}
	}
}

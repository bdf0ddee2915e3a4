package winpool

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Change is a member that goes, and why.
type Change struct {
	Member string
	Reason string
}

// Rollout is what converging the members to the pool takes.
type Rollout struct {
	// Replace: members that go, each for a new member, in this order.
	Replace []Change
	// Remove: members that go without a successor (the pool shrinks), in
	// this order: unhealthy ones first, then outdated ones, then the newest.
	Remove []Change
	// Create: new members beyond the replacements (the pool grows).
	Create int
}

// Empty reports whether the members are what the pool should be.
func (r Rollout) Empty() bool { return len(r.Replace) == 0 && len(r.Remove) == 0 && r.Create == 0 }

// Goes lists the members that go, replaced ones first.
func (r Rollout) Goes() []Change { return append(slices.Clone(r.Replace), r.Remove...) }

// Reasons a member goes.
const (
	ReasonOutdated   = "made from an earlier revision of the pool"
	ReasonUnfinished = "its create did not finish"
	ReasonVMMissing  = "its VM is gone"
	ReasonNotJoined  = "its VM backs no Node"
	ReasonScaleDown  = "the pool is smaller (the newest members go)"
)

// Plan says what converging members to the pool takes, and in what order.
// A member goes when it is unhealthy (its VM gone, no Node, its create
// unfinished, or NotReady or its agents not Running and Ready longer than
// ReplaceUnhealthyAfter), when it was
// made from another revision, or when the pool has more members than
// Replicas (the newest go). The members that go are replaced while the pool
// is short of healthy current members, unhealthy ones first, then the
// oldest; the rest are removed.
func Plan(p Pool, members []Member, now time.Time) Rollout {
	var bad, outdated []Change
	var current []Member
	byCreated := slices.Clone(members)
	slices.SortStableFunc(byCreated, func(a, b Member) int {
		return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.Name, b.Name))
	})
	for _, m := range byCreated {
		switch reason := p.unhealthy(m, now); {
		case reason != "":
			bad = append(bad, Change{m.Name, reason})
		case m.Revision != p.Revision:
			outdated = append(outdated, Change{m.Name, ReasonOutdated})
		default:
			current = append(current, m)
		}
	}
	goes := append(bad, outdated...)
	var r Rollout
	if len(current) >= p.Replicas {
		r.Remove = goes
		// The newest go: the longest-running members have proven themselves.
		for i := len(current) - 1; i >= p.Replicas; i-- {
			r.Remove = append(r.Remove, Change{current[i].Name, ReasonScaleDown})
		}
		return r
	}
	missing := p.Replicas - len(current)
	n := min(missing, len(goes))
	r.Replace, r.Remove, r.Create = goes[:n:n], goes[n:], missing-n
	return r
}

// unhealthy says why a member must be replaced whatever its revision; ""
// when it need not.
func (p Pool) unhealthy(m Member, now time.Time) string {
	switch {
	case m.Health == VMMissing:
		return ReasonVMMissing
	case m.Revision == "":
		return ReasonUnfinished
	case m.Health == NotJoined:
		return ReasonNotJoined
	case (m.Health == NotReady || m.Health == AgentsNotReady || m.Health == NetworkProbeFailed) && p.ReplaceUnhealthyAfter > 0 && !m.NotReadySince.IsZero() &&
		now.Sub(m.NotReadySince) >= p.ReplaceUnhealthyAfter:
		what := "its Node has been NotReady"
		switch m.Health {
		case AgentsNotReady:
			what = "its node agents have not been Running and Ready"
		case NetworkProbeFailed:
			what = "its network probe has been failing"
		}
		reason := fmt.Sprintf("%s for %s (replace_unhealthy_after = %s)", what, now.Sub(m.NotReadySince).Round(time.Second), p.ReplaceUnhealthyAfter)
		if len(m.Causes) > 0 {
			reason += ": " + strings.Join(m.Causes, "; ")
		}
		return reason
	}
	return ""
}

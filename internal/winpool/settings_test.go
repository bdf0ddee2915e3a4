package winpool_test

import (
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/winpool"
)

// TestRestampKeepsCurrentMembers: members of the revision a template's
// change of form left behind are current again, so the plan rolls none;
// a member outdated before stays outdated.
func TestRestampKeepsCurrentMembers(t *testing.T) {
	members := []winpool.Member{{Name: "p-a", Revision: "r1", Health: winpool.Ready}, {Name: "p-b", Revision: "r0", Health: winpool.Ready}}
	got := winpool.Restamp(members, "r1", "r2")
	if got[0].Revision != "r2" || got[1].Revision != "r0" || members[0].Revision != "r1" {
		t.Fatalf("Restamp = %+v (input now %+v)", got, members)
	}
	pool := winpool.Pool{Prefix: "p", Revision: "r2", Policy: winpool.Policy{Replicas: 1, MaxParallel: 1, MaxUnavailable: 1}}
	rollout := winpool.Plan(pool, got[:1], time.Now())
	if !rollout.Empty() {
		t.Errorf("a restamped member is rolled: %+v", rollout)
	}
	if winpool.Plan(pool, members[:1], time.Now()).Empty() {
		t.Error("without the restamp the member is current: the test proves nothing")
	}
}

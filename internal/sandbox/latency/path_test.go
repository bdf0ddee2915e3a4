package latency

import (
	"testing"
	"time"
)

// A hand-worked example, on durations of its own so that it holds whatever
// RealDurations say: a full clone 100 s, a first boot 300 s, a join script
// 60 s run three times. One node: 100 + 300 + 3×60 = 580 s. A template on
// each of three hosts of 16 provisioning units runs 3×16/4 = 12 full clones
// at once: 10 nodes fit in one wave (580 s); 20 need two, the 13th to 20th
// clones starting when the first twelve end (580 + 100 = 680 s); 50 need
// ceil(50/12) = 5 (580 + 4×100 = 980 s). One template on one host runs
// 16/4 = 4 at once whatever the hosts (each clone takes its units on the
// source's host too): 20 need 5 waves (580 + 400 = 980 s). Linked clones
// take 1 unit: 48 at once from three, so 50 need two waves of a 10 s
// linked clone.
func TestNodesPathHandWorked(t *testing.T) {
	const join Op = "test.join"
	m := &Model{Factor: 100, Durations: map[Op]Duration{
		CloneFull:           {P50: 100 * time.Second, P99: 200 * time.Second, Source: "test"},
		CloneLinked:         {P50: 10 * time.Second, P99: 20 * time.Second, Source: "test"},
		FirstBootCustomized: {P50: 300 * time.Second, P99: 600 * time.Second, Source: "test"},
		join:                {P50: 60 * time.Second, P99: 90 * time.Second, Source: "test"},
	}}
	create := []Step{{Name: "clone", Op: CloneFull}, {Name: "boot", Op: FirstBootCustomized}, {Name: "join", Op: join, Times: 3}}
	if got, want := m.PathOf(create).Real, 580*time.Second; got != want {
		t.Fatalf("one node = %s, want %s", got, want)
	}
	for _, tc := range []struct {
		n             int
		atOnce, waves int
		want          time.Duration
	}{
		{1, 12, 1, 580 * time.Second},
		{10, 12, 1, 580 * time.Second},
		{12, 12, 1, 580 * time.Second},
		{13, 12, 2, 680 * time.Second},
		{20, 12, 2, 680 * time.Second},
		{50, 12, 5, 980 * time.Second},
	} {
		got := m.NodesPath(tc.n, 3, 3, create)
		if got.AtOnce != tc.atOnce || got.Waves != tc.waves || got.Real != tc.want {
			t.Errorf("N=%d: %d at once, %d waves, %s; want %d, %d, %s (%s)", tc.n, got.AtOnce, got.Waves, got.Real, tc.atOnce, tc.waves, tc.want, got)
		}
	}
	if got := m.NodesPath(20, 3, 1, create); got.AtOnce != 4 || got.Waves != 5 || got.Real != 980*time.Second {
		t.Errorf("20 clones of one template on one host: %s; want 4 at once, 5 waves, 980s", got)
	}
	linked := []Step{{Name: "clone", Op: CloneLinked}, {Name: "boot", Op: FirstBootCustomized}}
	if got := m.NodesPath(50, 3, 3, linked); got.AtOnce != 48 || got.Waves != 2 || got.Real != 320*time.Second {
		t.Errorf("50 linked clones: %s; want 48 at once, 2 waves, 320s", got)
	}
	// The tail quantile adds up the P99s: 200 + 600 + 3×90 = 1070 s, and a
	// second wave waits a P99 clone.
	m.Quantile = Tail
	if got := m.NodesPath(20, 3, 3, create).Real; got != 1270*time.Second {
		t.Errorf("N=20 at P99 = %s, want 1270s", got)
	}
	m.Quantile = Median

	// A roll of 10 with max_surge 2: 5 creates and removals in sequence
	// per lane, with a 50 s removal: 5 × (580 + 50) = 3150 s.
	const remove Op = "test.remove"
	m.Durations[remove] = Duration{P50: 50 * time.Second, P99: 70 * time.Second, Source: "test"}
	one, roll := m.Roll(10, 2, create, []Step{{Name: "remove", Op: remove}})
	if one.Real != 630*time.Second || roll != 3150*time.Second {
		t.Errorf("roll of 10, surge 2: one %s, roll %s; want 630s, 3150s", one.Real, roll)
	}

	// A pull times its bytes at the quantile's throughput: 50 MB at the
	// image pull's median (RealRates) and at its slow tail.
	pull := []Step{{Name: "pull", Rate: ImagePull, Bytes: 50e6}}
	wantP50 := time.Duration(50e6 / RealRates[ImagePull].P50 * float64(time.Second))
	if got := m.PathOf(pull).Real; got != wantP50 {
		t.Errorf("a 50 MB pull at P50 = %s, want %s", got, wantP50)
	}
	m.Quantile = Tail
	if got, want := m.PathOf(pull).Real, time.Duration(50e6/RealRates[ImagePull].P99*float64(time.Second)); got != want || got <= wantP50 {
		t.Errorf("a 50 MB pull at P99 = %s, want %s (slower than the median's %s)", got, want, wantP50)
	}
}

// The package's own paths are the model's durations added up: a change of
// a duration moves the critical path with it.
func TestPackagePathsAreTheModelsDurations(t *testing.T) {
	m := New(1, Median)
	var one time.Duration
	for _, s := range NodeCreate {
		if s.Rate != "" {
			one += time.Duration(float64(s.Bytes) / RealRates[s.Rate].P50 * float64(time.Second))
			continue
		}
		one += RealDurations[s.Op].P50 * time.Duration(s.times())
	}
	got := m.NodesPath(20, 3, 3, nil)
	if got.One.Real != one || got.Real != one+RealDurations[CloneFull].P50 {
		t.Errorf("20 nodes on 3 hosts = %s; want one node %s plus one full clone queued", got, one)
	}
	m.Durations[CloneFull] = Duration{P50: time.Hour, P99: time.Hour, Source: "test"}
	if got2 := m.NodesPath(20, 3, 3, nil); got2.Real != got.Real+2*(time.Hour-RealDurations[CloneFull].P50) {
		t.Errorf("a slower clone must lengthen the path by twice its difference (its own and the queue): %s then %s", got, got2)
	}
}

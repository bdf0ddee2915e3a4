package winversion

import (
	"strings"
	"testing"
	"time"
)

func TestSupportWarnings(t *testing.T) {
	rel := func(v string) Release {
		r, err := ByVersion(v)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	today := day("2026-11-26")
	for _, tc := range []struct {
		name    string
		version string
		minor   int
		now     time.Time
		want    []string // fragments, one per warning, in order
	}{
		{"2019 on 1.36", "2019", 36, today, []string{"Windows Server 2019 is not among the releases Kubernetes 1.36 supports for Windows nodes (Windows Server 2022 and 2025; " + KubernetesWindowsSupportSource}},
		{"2022 on 1.36", "2022", 36, today, nil},
		{"2025 on 1.36", "2025", 36, today, nil},
		{"2022 on 1.36 the day its extended support ends", "2022", 36, day("2031-10-14"),
			[]string{"Windows Server 2022 left Microsoft's extended support on 2031-10-14: it gets no security updates (https://learn.microsoft.com/en-us/lifecycle/products/windows-server-2022)"}},
		{"2022 on 1.36 the day before", "2022", 36, day("2031-10-13"), nil},
		{"2019 on 1.36 after 2029-01-09: both", "2019", 36, day("2029-02-01"), []string{"not among the releases", "left Microsoft's extended support on 2029-01-09"}},
		{"2019 on a minor the table does not know", "2019", 30, today, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := SupportWarnings(rel(tc.version), tc.minor, tc.now)
			if len(got) != len(tc.want) {
				t.Fatalf("warnings %q, want %d", got, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("warning %d = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
	for v := range Lifecycles {
		if _, err := ByVersion(v); err != nil {
			t.Errorf("Lifecycles has %s, which Releases does not", v)
		}
	}
	for _, r := range Releases {
		lc, ok := Lifecycles[r.Version]
		if !ok || !lc.Start.Before(lc.MainstreamEnd) || !lc.MainstreamEnd.Before(lc.ExtendedEnd) || !strings.HasPrefix(lc.Source, "https://learn.microsoft.com/") {
			t.Errorf("Lifecycles[%s] = %+v: want ordered dates and the Microsoft Lifecycle page", r.Version, lc)
		}
	}
}

func TestLifecycleNote(t *testing.T) {
	r, _ := ByVersion("2019")
	for _, tc := range []struct {
		now  time.Time
		want string
	}{
		{day("2023-06-01"), "mainstream support until 2024-01-09, extended support (security updates) until 2029-01-09"},
		{day("2026-11-26"), "mainstream support ended 2024-01-09, extended support (security updates) until 2029-01-09"},
		{day("2029-01-09"), "mainstream support ended 2024-01-09, extended support ended 2029-01-09"},
	} {
		got := LifecycleNote(r, tc.now)
		if !strings.Contains(got, tc.want) || !strings.Contains(got, "https://learn.microsoft.com/en-us/lifecycle/products/windows-server-2019") {
			t.Errorf("LifecycleNote(2019, %s) = %q, want %q and its source", tc.now.Format("2006-01-02"), got, tc.want)
		}
	}
	if got := LifecycleNote(Release{Version: "2016"}, day("2026-01-01")); got != "" {
		t.Errorf("a release the table does not know: %q, want none", got)
	}
}

func TestServerMinor(t *testing.T) {
	for in, want := range map[string]int{"v1.36.3": 36, "v1.36.0-rc.1": 36, "v1.9.11+k3s1": 9} {
		if got, err := ServerMinor(in); err != nil || got != want {
			t.Errorf("ServerMinor(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "1.36.3", "v2.0.0", "devel"} {
		if _, err := ServerMinor(in); err == nil {
			t.Errorf("ServerMinor(%q) accepted", in)
		}
	}
}

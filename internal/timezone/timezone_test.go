package timezone

import (
	"slices"
	"testing"
)

func TestIDsAreCLDRsWindowsZones(t *testing.T) {
	if len(ids) != 139 {
		t.Fatalf("%d IDs, want CLDR's 139 Windows zones", len(ids))
	}
	if !slices.IsSorted(ids) {
		t.Error("ids is not sorted")
	}
	for _, id := range []string{"UTC", "GMT Standard Time", "Pacific Standard Time", "W. Europe Standard Time", "UTC+12", "Yukon Standard Time"} {
		if !Valid(id) {
			t.Errorf("Valid(%q) = false", id)
		}
	}
	for _, id := range []string{"", "utc", "Europe/London", "GMT", "Pacific Standard Time_dstoff", "Mid-Atlantic Standard Time", " UTC"} {
		if Valid(id) {
			t.Errorf("Valid(%q) = true", id)
		}
	}
	for id := range primaryIANA {
		if !Valid(id) {
			t.Errorf("primaryIANA names %q, not an ID", id)
		}
	}
}

func TestLegacyIndexMapsToIDs(t *testing.T) {
	for i, id := range legacyIndex {
		if !Valid(id) {
			t.Errorf("index %d maps to %q, which is not a Windows time zone ID", i, id)
		}
	}
	if id, ok := FromIndex(LegacyDefaultIndex); !ok || id != "GMT Standard Time" {
		t.Errorf("FromIndex(85) = %q, %v; want GMT Standard Time", id, ok)
	}
	if id, ok := FromIndex(4); !ok || id != "Pacific Standard Time" {
		t.Errorf("FromIndex(4) = %q, %v", id, ok)
	}
	for _, i := range []int64{-1, 5, 75, 301, 1 << 40} {
		if id, ok := FromIndex(i); ok {
			t.Errorf("FromIndex(%d) = %q, want none", i, id)
		}
	}
	if i, ok := Index("Tokyo Standard Time"); !ok || i != 235 {
		t.Errorf("Index(Tokyo Standard Time) = %d, %v; want 235", i, ok)
	}
	if i, ok := Index("UTC"); ok {
		t.Errorf("Index(UTC) = %d: the table has no UTC", i)
	}
	if id, _ := FromIndex(UTCIndex); id != "Greenwich Standard Time" {
		t.Errorf("UTCIndex is %s", id)
	}
	// Every index round-trips.
	for i, id := range legacyIndex {
		if back, ok := Index(id); !ok || int(back) != i {
			t.Errorf("Index(%q) = %d, %v; want %d", id, back, ok, i)
		}
	}
}

func TestNearest(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // among the suggestions
	}{
		{"utc", "UTC"},
		{"pacific standard time", "Pacific Standard Time"},
		{"Europe/London", "GMT Standard Time"},
		{"America/New_York", "Eastern Standard Time"},
		{"Pacific Standard Tme", "Pacific Standard Time"},
		{"W Europe Standard Time", "W. Europe Standard Time"},
		{"Tokyo Time", "Tokyo Standard Time"},
	} {
		got := Nearest(c.in)
		if len(got) == 0 || len(got) > maxSuggestions || !slices.Contains(got, c.want) {
			t.Errorf("Nearest(%q) = %q, want %q among at most %d", c.in, got, c.want, maxSuggestions)
		}
	}
}

package kubeletsim

import "testing"

// TestWindowsBuildLabel: the label carries major.minor.build, as
// OSInfo.GetBuild formats it, whatever the host's update build revision.
func TestWindowsBuildLabel(t *testing.T) {
	for in, want := range map[string]string{
		"10.0.20348.2340": "10.0.20348",
		"10.0.26100.1":    "10.0.26100",
		"10.0.17763":      "10.0.17763",
	} {
		if got := windowsBuildLabel(in); got != want {
			t.Errorf("windowsBuildLabel(%q) = %q, want %q", in, got, want)
		}
	}
}

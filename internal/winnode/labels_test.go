package winnode

import (
	"maps"
	"testing"
)

func TestNodeLabels(t *testing.T) {
	configured := map[string]string{"example.com/pool": "web", LabelWindowsBuild: "10.0.17763"}
	got := NodeLabels(configured, "10.0.20348")
	want := map[string]string{"example.com/pool": "web", LabelWindowsBuild: "10.0.20348"}
	if !maps.Equal(got, want) {
		t.Errorf("NodeLabels = %v, want %v (the guest's build wins)", got, want)
	}
	if configured[LabelWindowsBuild] != "10.0.17763" {
		t.Error("NodeLabels changed its argument")
	}
	if got := NodeLabels(nil, ""); got == nil || len(got) != 0 {
		t.Errorf("NodeLabels(nil, \"\") = %#v, want an empty map", got)
	}
}

package hooks

import (
	"slices"
	"testing"
)

func TestList(t *testing.T) {
	var l List[string]
	removeA := l.Add("a")
	removeB := l.Add("b")
	l.Add("c")
	if got := l.All(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("All = %q", got)
	}
	held := l.All()
	removeB()
	removeB() // twice: harmless
	if got := l.All(); !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("after removing b: %q", got)
	}
	if !slices.Equal(held, []string{"a", "b", "c"}) {
		t.Fatalf("a copy taken before the removal changed: %q", held)
	}
	removeA()
	if got := l.All(); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("after removing a: %q", got)
	}
}

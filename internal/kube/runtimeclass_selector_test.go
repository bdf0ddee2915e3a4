package kube

import (
	"maps"
	"testing"
)

func TestWindowsSelector(t *testing.T) {
	cases := []struct {
		name        string
		build, arch string
		extra, want map[string]string
	}{
		{"build and arch", "10.0.20348", "amd64", nil,
			map[string]string{"kubernetes.io/os": "windows", "kubernetes.io/arch": "amd64", "node.kubernetes.io/windows-build": "10.0.20348"}},
		{"no build", "", "arm64", nil, map[string]string{"kubernetes.io/os": "windows", "kubernetes.io/arch": "arm64"}},
		{"extra entries are merged over them", "10.0.17763", "amd64", map[string]string{"example.com/pool": "web", "kubernetes.io/arch": "arm64"},
			map[string]string{"kubernetes.io/os": "windows", "kubernetes.io/arch": "arm64", "node.kubernetes.io/windows-build": "10.0.17763", "example.com/pool": "web"}},
	}
	for _, c := range cases {
		if got := WindowsSelector(c.build, c.arch, c.extra); !maps.Equal(got, c.want) {
			t.Errorf("%s: WindowsSelector = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestSplitWindowsSelector(t *testing.T) {
	cases := []struct {
		name        string
		selector    map[string]string
		build, arch string
		extra       map[string]string
	}{
		{"what WindowsSelector makes", WindowsSelector("10.0.20348", "amd64", map[string]string{"example.com/pool": "web"}),
			"10.0.20348", "amd64", map[string]string{"example.com/pool": "web"}},
		{"no build, no arch", map[string]string{"kubernetes.io/os": "windows"}, "", "", nil},
		{"another OS is an extra entry", map[string]string{"kubernetes.io/os": "linux"}, "", "", map[string]string{"kubernetes.io/os": "linux"}},
	}
	for _, c := range cases {
		build, arch, extra := SplitWindowsSelector(c.selector)
		if build != c.build || arch != c.arch || !maps.Equal(extra, c.extra) || (extra == nil) != (c.extra == nil) {
			t.Errorf("%s: SplitWindowsSelector = %q, %q, %v; want %q, %q, %v", c.name, build, arch, extra, c.build, c.arch, c.extra)
		}
	}
}

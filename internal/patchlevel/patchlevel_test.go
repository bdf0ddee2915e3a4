package patchlevel

import (
	"slices"
	"testing"
)

func TestCompare(t *testing.T) {
	image := Image{BuildFull: "10.0.20348.4466", Updates: []string{"KB5070010", "KB5070011", "KB5070012"}}
	for _, tc := range []struct {
		name        string
		image       Image
		node        Node
		wantBuild   string
		wantMissing []string
		want        Status
	}{
		{
			name:      "made from the image",
			node:      Node{KernelVersion: "10.0.20348.4466", ImageBuildFull: "10.0.20348.4466", ImageUpdates: []string{"KB5070010", "KB5070011", "KB5070012"}},
			wantBuild: "10.0.20348.4466", want: Current,
		},
		{
			name:      "made from the month before",
			node:      Node{KernelVersion: "10.0.20348.4405", ImageBuildFull: "10.0.20348.4405", ImageUpdates: []string{"KB5070010", "KB5070011"}},
			wantBuild: "10.0.20348.4405", wantMissing: []string{"KB5070012"}, want: Behind,
		},
		{
			name: "patched in place to the image's revision: the cumulative update is there, the list is the image's",
			node: Node{KernelVersion: "10.0.20348.4466", ImageBuildFull: "10.0.20348.4405", ImageUpdates: []string{"KB5070010", "KB5070011"}},
			// Same revision, but a KB the node's image never installed: the
			// revision alone cannot tell whether a non-cumulative update
			// (a servicing stack update) came with it.
			wantBuild: "10.0.20348.4466", wantMissing: []string{"KB5070012"}, want: Behind,
		},
		{
			name:      "patched in place past the image",
			node:      Node{KernelVersion: "10.0.20348.4500", ImageBuildFull: "10.0.20348.4405"},
			wantBuild: "10.0.20348.4500", wantMissing: []string{"KB5070010", "KB5070011", "KB5070012"}, want: Ahead,
		},
		{
			name:      "KBs compared without regard to case",
			node:      Node{KernelVersion: "10.0.20348.4466", ImageUpdates: []string{"kb5070010", "kb5070011", "kb5070012"}},
			wantBuild: "10.0.20348.4466", want: Current,
		},
		{
			name:      "the kubelet reports no revision: the image's record stands in",
			node:      Node{KernelVersion: "10.0.20348", ImageBuildFull: "10.0.20348.4405", ImageUpdates: []string{"KB5070010", "KB5070011"}},
			wantBuild: "10.0.20348.4405", wantMissing: []string{"KB5070012"}, want: Behind,
		},
		{
			name:      "the kubelet's trailing newline (winstats formats it with one)",
			node:      Node{KernelVersion: "10.0.20348.4466\n", ImageUpdates: []string{"KB5070010", "KB5070011", "KB5070012"}},
			wantBuild: "10.0.20348.4466", want: Current,
		},
		{
			name:      "another release",
			node:      Node{KernelVersion: "10.0.26100.7171", ImageBuildFull: "10.0.26100.7171"},
			wantBuild: "10.0.26100.7171", want: OtherRelease,
		},
		{
			name:        "nothing tells the revision",
			node:        Node{KernelVersion: "10.0.20348"},
			wantMissing: []string{"KB5070010", "KB5070011", "KB5070012"}, want: Unknown,
		},
		{
			name:      "an image without updates compares by revision alone",
			image:     Image{BuildFull: "10.0.20348.4405"},
			node:      Node{KernelVersion: "10.0.20348.4052"},
			wantBuild: "10.0.20348.4052", want: Behind,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := image
			if tc.image.BuildFull != "" {
				img = tc.image
			}
			got := Compare(img, tc.node)
			if got.Status != tc.want || got.BuildFull != tc.wantBuild || !slices.Equal(got.Missing, tc.wantMissing) {
				t.Errorf("Compare = %+v, want status %s, build %q, missing %v", got, tc.want, tc.wantBuild, tc.wantMissing)
			}
		})
	}
}

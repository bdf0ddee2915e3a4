package artifacts

import (
	"fmt"
	"sort"
	"strings"
)

// modeArtifacts serve each networking mode's downloads, by mode: each
// mode's file registers its own (registerMode), under the names
// windows_golden_image's network_artifacts.<mode> takes. The provider's
// list (networking.Mode.Artifacts) is held equal to this one by
// TestModesMatchProvider.
var modeArtifacts = map[string]func(s *Server) (map[string]Artifact, error){}

func registerMode(mode string, serve func(s *Server) (map[string]Artifact, error)) {
	if _, dup := modeArtifacts[mode]; dup {
		panic("artifacts: mode " + mode + " registered twice")
	}
	modeArtifacts[mode] = serve
}

func sortedModes() []string {
	out := make([]string, 0, len(modeArtifacts))
	for m := range modeArtifacts {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// NetworkArtifactsHCL is the server's network artifacts as the HCL value
// of windows_golden_image's network_artifacts (and TF_VAR_network_artifacts,
// which Terraform parses as HCL for a variable of object type).
func (s *Server) NetworkArtifactsHCL() string {
	modes := make([]string, 0, len(modeArtifacts))
	for _, mode := range sortedModes() {
		arts := s.Network[mode]
		names := make([]string, 0, len(arts))
		for n := range arts {
			names = append(names, n)
		}
		sort.Strings(names)
		items := make([]string, 0, len(names))
		for _, n := range names {
			items = append(items, fmt.Sprintf("%s = { url = %q, sha256 = %q }", n, arts[n].URL, arts[n].SHA256))
		}
		modes = append(modes, mode+" = { "+strings.Join(items, ", ")+" }")
	}
	// One line: the sandbox's env file is sourced by a shell.
	return "{ " + strings.Join(modes, ", ") + " }"
}

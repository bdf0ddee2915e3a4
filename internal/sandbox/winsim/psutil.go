package winsim

import "strings"

// stepName returns the name in the script's first "# step: <name>" comment.
func stepName(script string) string {
	i := strings.Index(script, StepComment)
	if i < 0 {
		return ""
	}
	rest := script[i+len(StepComment):]
	if j := strings.IndexAny(rest, "\r\n"); j >= 0 {
		rest = rest[:j]
	}
	return strings.TrimSpace(rest)
}

func boolExit(failed bool) int {
	if failed {
		return 1
	}
	return 0
}

// Package timezone knows the Windows time zone IDs (ids.go, from Unicode
// CLDR), the legacy sysprep index of each (index.go, Microsoft's "Time Zone
// Index Values") and, for a value that is none of them, the IDs nearest to it.
package timezone

import (
	"slices"
	"strings"

	"github.com/agext/levenshtein"
)

// Default is the time zone of a new node and image: UTC.
const Default = "UTC"

// IDs lists the Windows time zone IDs, sorted.
func IDs() []string { return slices.Clone(ids) }

// Canonical is the ID as Windows spells it. Windows finds a zone by its
// registry key, whose names are case-insensitive (TimeZoneInfo.
// FindSystemTimeZoneById, which Set-TimeZone -Id calls, reads the key); ok
// is false for a value that names no zone.
func Canonical(id string) (canon string, ok bool) {
	for _, known := range ids {
		if strings.EqualFold(known, id) {
			return known, true
		}
	}
	return "", false
}

// Valid tells whether id is a Windows time zone ID spelled as Windows
// spells it.
func Valid(id string) bool {
	canon, ok := Canonical(id)
	return ok && canon == id
}

// maxSuggestions bounds what Nearest returns: enough to choose from, few
// enough to read in an error.
const maxSuggestions = 3

// Nearest suggests IDs for a value that is none: the ID spelled
// differently, the Windows zone of an IANA name (Europe/London: GMT
// Standard Time), and the IDs closest by edit distance.
func Nearest(value string) []string {
	if canon, ok := Canonical(value); ok {
		return []string{canon}
	}
	var out []string
	for _, id := range ids {
		if strings.EqualFold(primaryIANA[id], value) {
			out = append(out, id)
		}
	}
	if len(out) > 0 {
		return out
	}
	type scored struct {
		id   string
		dist int
	}
	all := make([]scored, 0, len(ids))
	lower := strings.ToLower(value)
	for _, id := range ids {
		all = append(all, scored{id, levenshtein.Distance(lower, strings.ToLower(id), nil)})
	}
	slices.SortStableFunc(all, func(a, b scored) int { return a.dist - b.dist })
	for _, s := range all[:maxSuggestions] {
		out = append(out, s.id)
	}
	return out
}

package winsim

import (
	"slices"
	"strings"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/updatepkg"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/pwsh"
)

// The search criteria of IUpdateSearcher::Search
// (https://learn.microsoft.com/en-us/windows/win32/api/wuapi/nf-wuapi-iupdatesearcher-search):
// conditions "Name=value" or "CategoryIDs contains 'guid'" joined by "and",
// and such conjunctions joined by "or" (which the page allows only at the
// top level). Modelled: IsInstalled=0, IsHidden=0, Type='Software' and
// CategoryIDs contains '<guid>'. The criteria's other real names
// (AutoSelectOnWebSites, BrowseOnly, DeploymentAction, IsAssigned,
// IsPresent, RebootRequired, RevisionNumber, UpdateID, IsInstalled=1,
// Type='Driver', ...) are refused as not modelled; a name the page does not
// list, or text that does not parse, is WU_E_INVALID_CRITERIA (0x80240032).

type criteria [][]condition // or of ands

type condition struct {
	name, value string
}

var realCriteriaNames = []string{"autoselectonwebsites", "browseonly", "categoryids", "deploymentaction", "isassigned",
	"ishidden", "isinstalled", "ispresent", "rebootrequired", "revisionnumber", "type", "updateid"}

func parseCriteria(s string) (criteria, error) {
	toks := criteriaTokens(s)
	var out criteria
	var and []condition
	for i := 0; ; {
		if i+2 >= len(toks) {
			return nil, comError(hrWUInvalidCriteria)
		}
		name, op, val := toks[i], strings.ToLower(toks[i+1]), toks[i+2]
		lname := strings.ToLower(name)
		if !slices.Contains(realCriteriaNames, lname) {
			return nil, comError(hrWUInvalidCriteria)
		}
		if (lname == "categoryids") != (op == "contains") || (op != "=" && op != "contains") {
			return nil, comError(hrWUInvalidCriteria)
		}
		v := strings.Trim(val, "'")
		c := condition{name: lname, value: strings.ToLower(v)}
		switch {
		case lname == "isinstalled" && val == "0", lname == "ishidden" && val == "0",
			lname == "type" && strings.EqualFold(val, "'Software'"):
		case lname == "categoryids" && strings.HasPrefix(val, "'") && strings.HasSuffix(val, "'") && len(val) == 38:
		default:
			return nil, pwsh.NotModelled("the search criterion " + name + " " + toks[i+1] + " " + val)
		}
		and = append(and, c)
		i += 3
		if i == len(toks) {
			return append(out, and), nil
		}
		switch strings.ToLower(toks[i]) {
		case "and":
		case "or":
			out, and = append(out, and), nil
		default:
			return nil, comError(hrWUInvalidCriteria)
		}
		i++
	}
}

// criteriaTokens splits names, operators, numbers and quoted strings.
func criteriaTokens(s string) []string {
	var toks []string
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == ' ' || c == '\t':
			i++
		case c == '=':
			toks = append(toks, "=")
			i++
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return append(toks, s[i:])
			}
			toks = append(toks, s[i:i+j+2])
			i += j + 2
		default:
			j := i
			for j < len(s) && s[j] != ' ' && s[j] != '\t' && s[j] != '=' && s[j] != '\'' {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		}
	}
	return toks
}

// matches reports whether a not-installed, not-hidden software update
// meets the criteria.
func (cr criteria) matches(e updatepkg.CatalogEntry) bool {
	for _, and := range cr {
		ok := true
		for _, c := range and {
			if c.name == "categoryids" && c.value != updatepkg.Classifications[e.Classification] {
				ok = false
			}
		}
		if ok {
			return true
		}
	}
	return false
}

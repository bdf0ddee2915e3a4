package winsim

import (
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/pwsh"
)

// Every host cmdlet says what it needs of the token (uac.go); one missing
// would be refused to every filtered token, as the rule says, but silently.
func TestUACClassifiesEveryCmdlet(t *testing.T) {
	builtin := map[string]bool{}
	for _, c := range pwsh.BuiltinCmdlets() {
		builtin[c.Name] = true
	}
	for _, c := range Commands() {
		if !builtin[c.Name] && cmdletNeeds[c.Name] == needUnclassified {
			t.Errorf("%s: not in cmdletNeeds", c.Name)
		}
	}
}

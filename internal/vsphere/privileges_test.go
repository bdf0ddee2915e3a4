package vsphere

import (
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated part of the least-privilege guide")

const guideTemplate = "../../templates/guides/least-privilege.md.tmpl"

// TestPrivilegesGuide: the guide's vSphere tables are MethodPrivileges.
func TestPrivilegesGuide(t *testing.T) {
	b, err := os.ReadFile(guideTemplate)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	re := regexp.MustCompile(`(?s)(<!-- privileges:begin[^\n]*-->\n).*?(<!-- privileges:end -->)`)
	if !re.MatchString(doc) {
		t.Fatalf("%s lacks the privileges:begin and privileges:end markers", guideTemplate)
	}
	loc := re.FindStringSubmatchIndex(doc)
	want := doc[:loc[3]] + PrivilegesMarkdown() + doc[loc[4]:]
	if want == doc {
		return
	}
	if *update {
		if err := os.WriteFile(guideTemplate, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s is not what %s says: run `go test ./internal/vsphere -run TestPrivilegesGuide -update`, then `make docs`", guideTemplate, PrivilegesFile)
}

func TestMethodPrivilegesComplete(t *testing.T) {
	id := regexp.MustCompile(`^[A-Z][A-Za-z]+(\.[A-Z][A-Za-z]+)+$`)
	for m, p := range MethodPrivileges {
		if len(p.Privileges) == 0 || p.On == "" || len(p.Resources) == 0 {
			t.Errorf("%s: privileges, object and resources must all be given: %+v", m, p)
		}
		for _, pr := range p.Privileges {
			if !id.MatchString(pr) {
				t.Errorf("%s: %q is not a privilege id", m, pr)
			}
		}
	}
	err := CheckPrivileges(map[string]int64{"PowerOnVM_Task": 1, "UpgradeVM_Task": 2})
	if err == nil || !strings.Contains(err.Error(), "UpgradeVM_Task") || strings.Contains(err.Error(), "PowerOnVM_Task") ||
		!strings.Contains(err.Error(), PrivilegesFile) {
		t.Errorf("CheckPrivileges = %v, want the undocumented method and the file to edit", err)
	}
}

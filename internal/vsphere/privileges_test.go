package vsphere

import (
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/vmware/govmomi/vim25/types"
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

// TestCheckResourcePrivileges: a resource seen calling a method must be
// among the method's Resources; calls without an operation of
// WithOperation's are not any resource's.
func TestCheckResourcePrivileges(t *testing.T) {
	ctx, node := WithOperation(t.Context(), "windows_node", "create")
	if ctx.Value(types.ID{}) != node {
		t.Fatalf("the context carries %v, want the operation id %q", ctx.Value(types.ID{}), node)
	}
	_, list := WithOperation(t.Context(), "windows_node", "list")
	_, image := WithOperation(t.Context(), "windows_golden_image", "delete")
	_, other := WithOperation(t.Context(), "windows_golden_image", "delete")
	if image == other {
		t.Errorf("two operations share the id %q", image)
	}
	for id, want := range map[string]string{node: "windows_node", list: "windows_node (list)", image: "windows_golden_image",
		"lro-1234-abcd": "", "windows_node.create": "", "windows_node-0123abcd": "", "other.create-0123abcd": ""} {
		if got, ok := OperationResource(id); got != want || ok != (want != "") {
			t.Errorf("OperationResource(%q) = %q, %v; want %q", id, got, ok, want)
		}
	}

	seen, err := CheckResourcePrivileges(map[string]map[string]int64{
		node:            {"CloneVM_Task": 1, "RetrievePropertiesEx": 3},
		list:            {"RetrievePropertiesEx": 1},
		image:           {"MarkAsTemplate": 1},
		"vcenter-op-17": {"MarkAsTemplate": 1}, // no resource's
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(seen["windows_node"], " "); got != "CloneVM_Task RetrievePropertiesEx" {
		t.Errorf("windows_node was seen calling %q", got)
	}
	_, err = CheckResourcePrivileges(map[string]map[string]int64{node: {"MarkAsTemplate": 1, "PowerOnVM_Task": 1}})
	if err == nil || !strings.Contains(err.Error(), "windows_node calls MarkAsTemplate") || strings.Contains(err.Error(), "PowerOnVM_Task") ||
		!strings.Contains(err.Error(), PrivilegesFile) {
		t.Errorf("CheckResourcePrivileges = %v, want the resource, the method and the file to edit", err)
	}
}

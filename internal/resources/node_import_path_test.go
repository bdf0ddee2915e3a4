package resources

import (
	"errors"
	"strings"
	"testing"
)

// A restricted vCenter role gives no inventory path (an error, an empty one
// or one without the datacenter): the import never slices a short string,
// keeps the path it was given, or says what to do.
func TestImportedPath(t *testing.T) {
	denied := errors.New("reading the inventory path of virtual machine vm-42: NoPermission")
	cases := []struct {
		name, id, read   string
		readErr          error
		vmPath, folder   string
		wantErrFragments []string
	}{
		{name: "read", id: "4213c3f7-0000-0000-0000-000000000001", read: "/dc1/vm/k8s/win-0", vmPath: "/dc1/vm/k8s/win-0", folder: "/dc1/vm/k8s"},
		{name: "read at the root folder", id: "/dc1/vm/win-0", read: "/dc1/vm/win-0", vmPath: "/dc1/vm/win-0", folder: "/dc1/vm"},
		{name: "error, imported by path", id: "/dc1/vm/k8s/win-0", readErr: denied, vmPath: "/dc1/vm/k8s/win-0", folder: "/dc1/vm/k8s"},
		{name: "empty, imported by path", id: "/dc1/vm/k8s/win-0", read: "", vmPath: "/dc1/vm/k8s/win-0", folder: "/dc1/vm/k8s"},
		{name: "error, imported by UUID", id: "4213c3f7-0000-0000-0000-000000000001", readErr: denied,
			wantErrFragments: []string{"NoPermission", "System.Read", "import the node by its inventory path"}},
		{name: "empty, imported by UUID", id: "4213c3f7-0000-0000-0000-000000000001", read: "",
			wantErrFragments: []string{`vCenter returned the path ""`, "System.Read"}},
		{name: "no parents, imported by UUID", id: "4213c3f7-0000-0000-0000-000000000001", read: "/win-0",
			wantErrFragments: []string{`"/win-0"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vmPath, folder, err := importedPath(c.id, c.read, c.readErr)
			if len(c.wantErrFragments) > 0 {
				if err == nil {
					t.Fatalf("importedPath = %q, %q; want an error", vmPath, folder)
				}
				for _, f := range c.wantErrFragments {
					if !strings.Contains(err.Error(), f) {
						t.Errorf("error %q lacks %q", err, f)
					}
				}
				return
			}
			if err != nil || vmPath != c.vmPath || folder != c.folder {
				t.Errorf("importedPath = %q, %q, %v; want %q, %q", vmPath, folder, err, c.vmPath, c.folder)
			}
		})
	}
}

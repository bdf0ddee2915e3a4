package vsphere_test

import (
	"context"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// FuzzFindVM: an inventory path or managed object id from a configuration
// or an import (any text: XML metacharacters, NUL, invalid UTF-8, "..")
// never panics, and what it finds is a virtual machine: a folder, a
// datacenter or a host at a path is refused by name.
func FuzzFindVM(f *testing.F) {
	e := newEnv(f)
	for _, s := range []string{e.srv.Templates["2022"], "vm-42", "/DC0/vm", "/DC0/host/DC0_C0", "/", "//..//DC0/vm/../vm", "vm-<&>\x00", "\xff", "/DC0/vm/\u2019"} {
		f.Add(s)
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, s string) {
		ref, err := e.c.FindVM(ctx, s)
		if err == nil && (ref.Type != vsphere.TypeVirtualMachine || ref.Value == "") {
			t.Fatalf("FindVM(%q) = %v", s, ref)
		}
		ref, err = e.c.FindFolderByPath(ctx, s, false)
		if err == nil && (ref.Type != vsphere.TypeFolder || ref.Value == "") {
			t.Fatalf("FindFolderByPath(%q) = %v", s, ref)
		}
	})
}

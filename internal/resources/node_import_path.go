package resources

import (
	"fmt"
	"strings"
)

// importedPath returns the vm_path and folder of an imported node from the
// VM's inventory path as vCenter reads it (read, readErr). A vCenter role
// that may not read the VM's datacenter or folders gives no path, or one
// without them; an import by inventory path then keeps the path that found
// the VM, and an import by instance UUID is refused with what to do.
func importedPath(id, read string, readErr error) (vmPath, folder string, err error) {
	p := read
	if readErr != nil || !isVMPath(p) {
		if !isVMPath(id) {
			why := fmt.Sprintf("vCenter returned the path %q", read)
			if readErr != nil {
				why = readErr.Error()
			}
			return "", "", fmt.Errorf("the inventory path of the VM cannot be read (%s): the vCenter role needs read access "+
				"(System.Read) on the VM's datacenter and folders, or import the node by its inventory path (/dc/vm/folder/name) instead", why)
		}
		p = id
	}
	return p, p[:strings.LastIndex(p, "/")], nil
}

// isVMPath reports an absolute inventory path with a datacenter, its VM
// folder and a name: /dc/vm/name at least.
func isVMPath(p string) bool {
	return strings.HasPrefix(p, "/") && strings.Count(p, "/") >= 3 && !strings.Contains(p, "//") && !strings.HasSuffix(p, "/")
}

//go:build !linux

package controlplane

import "syscall"

// sysProcAttr has nothing to add where the kernel cannot tie a child's life
// to its parent's; Stop still ends every component.
func sysProcAttr() *syscall.SysProcAttr { return nil }

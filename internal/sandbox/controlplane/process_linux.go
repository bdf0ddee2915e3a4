package controlplane

import "syscall"

// sysProcAttr makes the kernel kill a component when the process that
// started it dies, so a crashed or killed test never leaves etcd or the API
// server running.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

package services

import "syscall"

// sysProcAttr makes the kernel kill a server when the test binary dies, so
// that a crashed or timed-out test does not leave servers running.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

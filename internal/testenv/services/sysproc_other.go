//go:build !linux

package services

import "syscall"

// sysProcAttr returns nil: outside Linux, servers are stopped by the test's
// cleanup only.
func sysProcAttr() *syscall.SysProcAttr { return nil }

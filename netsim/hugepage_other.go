//go:build !linux

package netsim

import "unsafe"

// adviseHuge is advice the other systems are not given (see
// hugepage_linux.go).
func adviseHuge(unsafe.Pointer, uintptr) {}

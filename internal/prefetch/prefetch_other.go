//go:build !amd64

package prefetch

import "unsafe"

// Lines is a no-op where no prefetch instruction is wired up (see
// prefetch_amd64.go).
func Lines(unsafe.Pointer, int) {}

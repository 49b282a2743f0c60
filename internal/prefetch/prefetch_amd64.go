package prefetch

import "unsafe"

// Lines prefetches (x86 PREFETCHT0) n consecutive 64-byte cache lines,
// the first the one holding p, and returns without waiting for them.
//
//go:noescape
func Lines(p unsafe.Pointer, n int)

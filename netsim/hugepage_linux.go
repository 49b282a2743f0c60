package netsim

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the x86-64 and arm64 transparent huge page size.
const hugePage = 2 << 20

// adviseHuge asks the kernel to back the whole 2 MiB pages inside
// [p, p+n) with transparent huge pages (madvise MADV_HUGEPAGE). It is
// advice: with THP set to "never", on memory the runtime already touched
// (then only khugepaged may collapse it, later), or when it fails, nothing
// changes but the TLB misses. Go's runtime leaves its heap to the system
// default, which Debian sets to "madvise", so without this call the heap
// gets no huge pages at all.
func adviseHuge(p unsafe.Pointer, n uintptr) {
	start := (uintptr(p) + hugePage - 1) &^ (hugePage - 1)
	end := (uintptr(p) + n) &^ (hugePage - 1)
	if end <= start {
		return
	}
	_ = unix.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, start-uintptr(p))), end-start), unix.MADV_HUGEPAGE)
}

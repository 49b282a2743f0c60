package prefetch

import (
	"testing"
	"unsafe"
)

// A prefetch must leave memory as it was, whatever n, and must not fault
// on lines past the end of the allocation.
func TestLinesChangesNothing(t *testing.T) {
	b := make([]byte, 200)
	for i := range b {
		b[i] = byte(i)
	}
	for _, n := range []int{-1, 0, 1, 3, 64} {
		Lines(unsafe.Pointer(&b[len(b)-1]), n)
	}
	for i := range b {
		if b[i] != byte(i) {
			t.Fatalf("byte %d is %d after a prefetch, want %d", i, b[i], byte(i))
		}
	}
}

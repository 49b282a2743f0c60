package netsim

import (
	"testing"
	"unsafe"
)

// The structs a packet writes keep a line of padding at each end (see
// linePad): their first field starts a line in, their last ends a line
// before the struct does.
func TestHotStructsPadded(t *testing.T) {
	var l Link
	var d DropTail
	var p Pool[Packet]
	for _, c := range []struct {
		name               string
		size, first, after uintptr
	}{
		{"Link", unsafe.Sizeof(l), unsafe.Offsetof(l.clk), unsafe.Offsetof(l.dt) + unsafe.Sizeof(l.dt)},
		{"DropTail", unsafe.Sizeof(d), unsafe.Offsetof(d.q), unsafe.Offsetof(d.stats) + unsafe.Sizeof(d.stats)},
		{"Pool", unsafe.Sizeof(p), unsafe.Offsetof(p.Init), unsafe.Offsetof(p.made) + unsafe.Sizeof(p.made)},
	} {
		if c.first < 64 || c.size-c.after < 64 {
			t.Errorf("%s: fields from byte %d to %d of %d: want a cache line (64 B) of padding at each end", c.name, c.first, c.after, c.size)
		}
	}
}

package netsim

import "unsafe"

// Pool is a free list of descriptors: a model takes one per packet it
// sends and gives it back when the link delivers or drops it (the
// substrate never frees a Packet, see Packet), so the hot path stops
// allocating once the pool has grown to the packets in flight. It is LIFO:
// the descriptor touched last, still in cache, is reused first.
//
// Descriptors are made in slabs, not one by one: a slab is one allocation
// of many, so the packets in flight sit in few pages, and a slab of a few
// megabytes is advised to the kernel as huge pages (hugepage_linux.go). At
// 10 Gbit/s and a 114 ms RTT some 10⁵ descriptors are in flight, each out
// of cache by the time it arrives; with 4 KiB pages every arrival is also a
// TLB miss, with 2 MiB pages few are (experiments/highbdp, docs/high-bdp.md
// "Round 5").
//
// T is the model's own descriptor, usually a struct embedding a Packet
// and what it carries. A Pool is not safe for concurrent use (one event
// loop owns it).
type Pool[T any] struct {
	_ linePad
	// Init, if set, runs once on each descriptor the pool makes, before
	// its first Get: the place to link a wrapper to its Packet
	// (p.Meta = w).
	Init func(*T)
	free []*T
	made int
	_    linePad
}

// Slab sizes: the first slab is small, so a small model does not pay for a
// large one; each next one is as large as all before (the pool doubles),
// up to maxSlabBytes.
const (
	minSlab      = 64
	maxSlabBytes = 16 << 20
)

// Get returns a recycled descriptor, as it was Put, or a new one.
func (p *Pool[T]) Get() *T {
	if len(p.free) == 0 {
		p.grow()
	}
	k := len(p.free)
	x := p.free[k-1]
	p.free[k-1] = nil
	p.free = p.free[:k-1]
	return x
}

// grow makes the next slab and puts its descriptors on the free list, the
// slab's first on top (handed out first).
func (p *Pool[T]) grow() {
	size := max(int(unsafe.Sizeof(*new(T))), 1)
	n := max(minSlab, min(p.made, maxSlabBytes/size))
	slab := make([]T, n)
	adviseHuge(unsafe.Pointer(&slab[0]), uintptr(n)*uintptr(size))
	if p.Init != nil {
		for i := range slab {
			p.Init(&slab[i])
		}
	}
	for i := n - 1; i >= 0; i-- {
		p.free = append(p.free, &slab[i])
	}
	p.made += n
}

// Put gives x back. The caller clears whatever it must not keep alive.
func (p *Pool[T]) Put(x *T) { p.free = append(p.free, x) }

// Free is how many descriptors wait for reuse; Made how many the pool has
// made: its high-water mark, rounded up to a slab.
func (p *Pool[T]) Free() int { return len(p.free) }
func (p *Pool[T]) Made() int { return p.made }

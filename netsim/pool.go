package netsim

// Pool is a free list of descriptors: a model takes one per packet it
// sends and gives it back when the link delivers or drops it (the
// substrate never frees a Packet, see Packet), so the hot path stops
// allocating once the pool has grown to the packets in flight. It is LIFO:
// the descriptor touched last, still in cache, is reused first.
//
// T is the model's own descriptor, usually a struct embedding a Packet
// and what it carries. A Pool is not safe for concurrent use (one event
// loop owns it).
type Pool[T any] struct {
	// New makes a descriptor when the pool is empty (new(T) if nil): the
	// place to link a wrapper to its Packet once (p.Meta = w).
	New  func() *T
	free []*T
	made int
}

// Get returns a recycled descriptor, as it was Put, or a new one.
func (p *Pool[T]) Get() *T {
	if k := len(p.free); k > 0 {
		x := p.free[k-1]
		p.free[k-1] = nil
		p.free = p.free[:k-1]
		return x
	}
	p.made++
	if p.New != nil {
		return p.New()
	}
	return new(T)
}

// Put gives x back. The caller clears whatever it must not keep alive.
func (p *Pool[T]) Put(x *T) { p.free = append(p.free, x) }

// Free is how many descriptors wait for reuse; Made how many Get had to
// make: the pool's high-water mark.
func (p *Pool[T]) Free() int { return len(p.free) }
func (p *Pool[T]) Made() int { return p.made }

package netsim

import "github.com/pseudocong/pseudocong/internal/ring"

// fifo is the buffer under DropTail, RED and TBF: a ring of packets with a
// byte count. The qdisc above it enforces the limit; the ring grows to the
// high-water mark once, so a steady run does not allocate.
//
// Each slot keeps the packet's length beside the pointer. A packet can sit
// in a long queue for milliseconds, and by then its descriptor has left the
// cache: taking the length from the slot lets the queue and the link count
// it and serialise it without touching the descriptor, which is next read
// when the wire delivers it (and prefetched for that, see Link.onDeliver).
type fifo struct {
	r     ring.Buffer[queued]
	n     int // = r.Len(), kept as a field for the qdiscs' hot paths
	bytes int
}

type queued struct {
	p   *Packet
	len int // p.Len when pushed
}

func (f *fifo) push(p *Packet) {
	f.r.Push(queued{p, p.Len})
	f.n++
	f.bytes += p.Len
}

// peek is the oldest packet, nil when empty.
func (f *fifo) peek() *Packet {
	if f.n == 0 {
		return nil
	}
	return f.r.Head().p
}

// pop removes the oldest packet, nil when empty.
func (f *fifo) pop() *Packet {
	p, _ := f.popLen()
	return p
}

// popLen is pop with the packet's length, read from the slot.
func (f *fifo) popLen() (*Packet, int) {
	if f.n == 0 {
		return nil, 0
	}
	q := f.r.Pop()
	f.n--
	f.bytes -= q.len
	return q.p, q.len
}

package netsim

import "github.com/pseudocong/pseudocong/internal/ring"

// fifo is the buffer under DropTail, RED and TBF: a ring of packets with a
// byte count. The qdisc above it enforces the limit; the ring grows to the
// high-water mark once, so a steady run does not allocate.
type fifo struct {
	r     ring.Buffer[*Packet]
	n     int // = r.Len(), kept as a field for the qdiscs' hot paths
	bytes int
}

func (f *fifo) push(p *Packet) {
	f.r.Push(p)
	f.n++
	f.bytes += p.Len
}

// peek is the oldest packet, nil when empty.
func (f *fifo) peek() *Packet {
	if f.n == 0 {
		return nil
	}
	return *f.r.Head()
}

// pop removes the oldest packet, nil when empty.
func (f *fifo) pop() *Packet {
	if f.n == 0 {
		return nil
	}
	p := f.r.Pop()
	f.n--
	f.bytes -= p.Len
	return p
}

package netsim

// fifo is a growable ring of packets with a byte count: the buffer under
// DropTail, RED and TBF. The qdisc above it enforces the limit; the ring
// only grows to the high-water mark once, so a steady run does not
// allocate.
type fifo struct {
	buf   []*Packet // len is a power of two
	head  int
	n     int
	bytes int
}

func (f *fifo) push(p *Packet) {
	if f.n == len(f.buf) {
		f.grow()
	}
	f.buf[(f.head+f.n)&(len(f.buf)-1)] = p
	f.n++
	f.bytes += p.Len
}

func (f *fifo) peek() *Packet {
	if f.n == 0 {
		return nil
	}
	return f.buf[f.head]
}

func (f *fifo) pop() *Packet {
	if f.n == 0 {
		return nil
	}
	p := f.buf[f.head]
	f.buf[f.head] = nil // the ring must not keep a recycled packet alive
	f.head = (f.head + 1) & (len(f.buf) - 1)
	f.n--
	f.bytes -= p.Len
	return p
}

func (f *fifo) grow() {
	size := max(16, 2*len(f.buf))
	buf := make([]*Packet, size)
	for i := range f.n {
		buf[i] = f.buf[(f.head+i)&(len(f.buf)-1)]
	}
	f.buf, f.head = buf, 0
}

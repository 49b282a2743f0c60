// Package ring is a growable FIFO ring buffer. The queues of the network
// model (a qdisc's backlog, the packets on a wire, a delay line) grow to
// their high-water mark once and are reused after, so a steady run does not
// allocate; popped slots are zeroed so the ring keeps nothing alive.
package ring

// Buffer is a FIFO of T. The zero value is empty and ready to use.
type Buffer[T any] struct {
	buf  []T // len is 0 or a power of two
	h, n int
}

// minSize is the first allocation: small queues never regrow.
const minSize = 16

// Len is the number of elements.
func (b *Buffer[T]) Len() int { return b.n }

// Push appends v at the tail.
func (b *Buffer[T]) Push(v T) {
	if b.n == len(b.buf) {
		b.grow()
	}
	b.buf[(b.h+b.n)&(len(b.buf)-1)] = v
	b.n++
}

// Head is the oldest element, in place (valid until the next Push or
// Pop); it panics on an empty buffer.
func (b *Buffer[T]) Head() *T {
	if b.n == 0 {
		panic("ring: Head of an empty buffer")
	}
	return &b.buf[b.h]
}

// Pop removes and returns the oldest element; it panics on an empty buffer.
func (b *Buffer[T]) Pop() T {
	if b.n == 0 {
		panic("ring: Pop of an empty buffer")
	}
	v := b.buf[b.h]
	var zero T
	b.buf[b.h] = zero
	b.h = (b.h + 1) & (len(b.buf) - 1)
	b.n--
	return v
}

func (b *Buffer[T]) grow() {
	buf := make([]T, max(minSize, 2*len(b.buf)))
	for i := range b.n {
		buf[i] = b.buf[(b.h+i)&(len(b.buf)-1)]
	}
	b.buf, b.h = buf, 0
}

package agent

// ring is a bounded FIFO. Its buffer grows on demand up to limit, so a large
// limit costs nothing until the queue really fills.
type ring[T any] struct {
	buf   []T
	head  int
	n     int
	limit int
}

func newRing[T any](limit int) *ring[T] { return &ring[T]{limit: limit} }

func (r *ring[T]) len() int { return r.n }

// push appends v and reports false, leaving the ring unchanged, when full.
func (r *ring[T]) push(v T) bool {
	if r.n >= r.limit {
		return false
	}
	if r.n == len(r.buf) {
		r.grow()
	}
	r.buf[(r.head+r.n)%len(r.buf)] = v
	r.n++
	return true
}

func (r *ring[T]) grow() {
	size := min(max(8, 2*len(r.buf)), r.limit)
	buf := make([]T, size)
	for i := range r.n {
		buf[i] = r.buf[(r.head+i)%len(r.buf)]
	}
	r.buf, r.head = buf, 0
}

// peek returns the oldest element; the ring must not be empty.
func (r *ring[T]) peek() *T { return &r.buf[r.head] }

// pop removes and returns the oldest element; the ring must not be empty.
func (r *ring[T]) pop() T {
	var zero T
	v := r.buf[r.head]
	r.buf[r.head] = zero // let the GC take what the element referenced
	r.head = (r.head + 1) % len(r.buf)
	r.n--
	return v
}

// drain removes every element, oldest first, passing each to f.
func (r *ring[T]) drain(f func(T)) {
	for r.n > 0 {
		f(r.pop())
	}
}

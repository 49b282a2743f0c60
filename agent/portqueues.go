package agent

// portQueues is a set of per-ingress-port FIFOs served round-robin, as
// Open vSwitch's ofproto/pinsched.c keeps them: a port's queue exists while
// it holds packets, the queues are visited in a fixed order (here: the
// order in which they were created, where OVS uses its hash map's order)
// and each visit takes one packet. dropOldestOfLongest drops the head of
// the longest queue, as pinsched's drop_packet does; where OVS picks among
// equally long queues at random, this takes the first of them in
// round-robin order from the next queue to be served, so runs stay
// deterministic.
type portQueues[T any] struct {
	queues []*portQueue[T]
	next   int // index into queues of the next queue to serve
	n      int
	port   func(*T) uint16
}

type portQueue[T any] struct {
	port  uint16
	items *ring[T]
}

func newPortQueues[T any](port func(*T) uint16) *portQueues[T] {
	return &portQueues[T]{port: port}
}

func (pq *portQueues[T]) len() int { return pq.n }

func (pq *portQueues[T]) push(v T) {
	p := pq.port(&v)
	var q *portQueue[T]
	for _, x := range pq.queues {
		if x.port == p {
			q = x
			break
		}
	}
	if q == nil {
		q = &portQueue[T]{port: p, items: newRing[T](int(^uint(0) >> 1))}
		pq.queues = append(pq.queues, q)
	}
	q.items.push(v)
	pq.n++
}

// peek returns what pop would return; pq must not be empty.
func (pq *portQueues[T]) peek() *T { return pq.queues[pq.next].items.peek() }

// pop takes the head of the next queue in round-robin order; pq must not
// be empty.
func (pq *portQueues[T]) pop() T {
	i := pq.next
	v := pq.queues[i].items.pop()
	pq.n--
	if pq.queues[i].items.len() == 0 {
		pq.remove(i) // next now names the queue after it
	} else {
		pq.next = (i + 1) % len(pq.queues)
	}
	return v
}

// dropOldestOfLongest removes and returns the head of the longest queue;
// pq must not be empty.
func (pq *portQueues[T]) dropOldestOfLongest() T {
	best := -1
	for k := range pq.queues {
		i := (pq.next + k) % len(pq.queues)
		if best < 0 || pq.queues[i].items.len() > pq.queues[best].items.len() {
			best = i
		}
	}
	v := pq.queues[best].items.pop()
	pq.n--
	if pq.queues[best].items.len() == 0 {
		pq.remove(best)
	}
	return v
}

func (pq *portQueues[T]) remove(i int) {
	pq.queues = append(pq.queues[:i], pq.queues[i+1:]...)
	if i < pq.next {
		pq.next--
	}
	if pq.next >= len(pq.queues) {
		pq.next = 0
	}
}

// drain removes everything in round-robin order.
func (pq *portQueues[T]) drain(f func(T)) {
	for pq.n > 0 {
		f(pq.pop())
	}
}

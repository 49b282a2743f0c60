package clock

import (
	"math"
	"math/bits"
)

// The near future is a calendar of calBuckets buckets, each 1<<shift ns
// wide, where the simulators' links keep their pending events (each
// link's next delivery, due within a serialisation or a propagation
// delay); anything due later waits in a heap. The width adapts to the
// model (adapt): 256 ns in the 10 Gbit/s cells, 2 µs at 200 Mbit/s.
const (
	calBuckets   = 1024
	calWords     = calBuckets / 64
	calInitShift = 8  // NewSim's: 256 ns buckets (the zero eventQueue's are 1 ns)
	calMaxShift  = 30 // 1 s buckets, a calendar of 18 minutes
	calEpoch     = 4096
)

// node is an event in the calendar: one bucket is a singly linked list of
// nodes in (time, insertion) order. Links are indices into
// eventQueue.nodes, 0 for none, so the lists hold no pointers and relinking
// costs no write barrier.
type node struct {
	e    entry
	next int32
}

// eventQueue is the Sim's pending events in (time, insertion) order: a
// calendar queue for the near future and a heap (ordered by (time, seq))
// for the far future.
//
// Bucket numbers are times >> shift. The calendar covers the buckets
// cur to cur+calBuckets-1, bucket b in slot b % calBuckets; every event
// in the heap is due in bucket cur+calBuckets or later, so after every
// event in the calendar. When cur moves on (front, when the calendar's
// first bucket has run empty), the heap's events that the calendar now
// covers move into it in (time, seq) order. Nothing is queued before
// bucket cur (the virtual clock is monotone; push's caller lowers cur
// first on the rare call that would, see lower).
//
// Ties keep insertion order: a bucket's list is kept sorted by time, and
// an event goes after every event due no later than it. Two events due at
// the same time and both in the calendar were either pushed in order or
// came from the heap in seq order; one pushed into the heap was pushed
// before the calendar covered its bucket, so before any event pushed into
// the calendar for that time, and it enters the calendar as soon as the
// calendar covers it, ahead of them.
type eventQueue struct {
	cur   int64 // the calendar's first bucket
	shift uint  // bucket width: 1 << shift ns
	// floorAt is floor(): cur's first nanosecond. farB is the bucket of
	// the heap's first event, MaxInt64 if the heap is empty.
	floorAt, farB int64
	// adapt's counts over the current epoch of calEpoch pushes.
	pushes, farPushes int
	nodes             []node
	free              int32 // first free node, 0 for none
	ringN             int   // events in the calendar, stopped ones included
	head              [calBuckets]int32
	tail              [calBuckets]int32
	bits              [calWords]uint64 // bit s: slot s is not empty
	words             uint64           // bit w: bits[w] is not 0
	far               eventHeap
}

func (q *eventQueue) bucket(at int64) int64 { return at >> q.shift }

// floor is the earliest time push accepts without lower; no queued event
// is due before it.
func (q *eventQueue) floor() int64 { return q.floorAt }

// farMoved keeps farB in step with the heap.
func (q *eventQueue) farMoved() {
	q.farB = math.MaxInt64
	if len(q.far) > 0 {
		q.farB = q.bucket(q.far[0].at)
	}
}

// push queues e after every entry queued before it; e.at is not before
// floor.
func (q *eventQueue) push(e entry) {
	if q.pushes++; q.pushes == calEpoch {
		q.adapt()
	}
	if b := q.bucket(e.at); b-q.cur < calBuckets {
		q.ringPush(b, e)
	} else {
		q.farPushes++
		q.far.push(e)
		q.farMoved()
	}
}

// adapt ends an epoch: it widens the buckets if more than 1/16 of the
// epoch's pushes went to the heap (the calendar is too short for the
// model's delays), or narrows them if the calendar's events crowd more
// than 4 to a bucket (sorted inserts walk) while the heap took under
// 1/64. Either way the events go through the heap and back (lower), in
// (time, seq) order.
func (q *eventQueue) adapt() {
	far := q.farPushes
	q.pushes, q.farPushes = 0, 0
	shift := q.shift
	switch {
	case far > calEpoch/16:
		if shift < calMaxShift {
			shift++
		}
	case far < calEpoch/64 && shift > 0:
		used := 0
		for _, w := range q.bits {
			used += bits.OnesCount64(w)
		}
		if q.ringN > 4*used {
			shift--
		}
	}
	if shift != q.shift {
		t := q.floor()
		q.shift = shift
		q.lower(t)
	}
}

func (q *eventQueue) alloc() int32 {
	if id := q.free; id != 0 {
		q.free = q.nodes[id].next
		return id
	}
	if len(q.nodes) == 0 {
		q.nodes = append(q.nodes, node{}) // index 0 is "none"
	}
	q.nodes = append(q.nodes, node{})
	return int32(len(q.nodes) - 1)
}

// ringPush links e into bucket b's list after every event due no later.
func (q *eventQueue) ringPush(b int64, e entry) {
	id := q.alloc()
	nodes := q.nodes
	n := &nodes[id]
	n.e, n.next = e, 0
	s := b & (calBuckets - 1)
	q.ringN++
	t := q.tail[s]
	if t == 0 {
		q.head[s], q.tail[s] = id, id
		q.bits[s>>6] |= 1 << (s & 63)
		q.words |= 1 << (s >> 6)
		return
	}
	if nodes[t].e.at <= e.at { // the common case: due last in its bucket
		nodes[t].next = id
		q.tail[s] = id
		return
	}
	var prev int32
	c := q.head[s]
	for nodes[c].e.at <= e.at { // ends before the tail, which is due later
		prev, c = c, nodes[c].next
	}
	n.next = c
	if prev == 0 {
		q.head[s] = id
	} else {
		nodes[prev].next = id
	}
}

// front is the next entry in (time, insertion) order, or nil if the
// queue is empty. It may move cur on (to the entry's bucket) and events
// from the heap into the calendar; it never reorders them.
func (q *eventQueue) front() *entry {
	if q.ringN == 0 {
		if len(q.far) == 0 {
			return nil
		}
		q.advance(q.bucket(q.far[0].at))
	}
	c := int(q.cur & (calBuckets - 1))
	s := q.nextSlot(c)
	if s != c {
		q.advance(q.cur + int64((s-c)&(calBuckets-1)))
	}
	return &q.nodes[q.head[s&(calBuckets-1)]].e
}

// nextSlot is the first non-empty slot at or after c, cyclically: the
// calendar's earliest bucket. The calendar is not empty.
func (q *eventQueue) nextSlot(c int) int {
	w := c >> 6
	if x := q.bits[w] >> (c & 63); x != 0 {
		return c + bits.TrailingZeros64(x)
	}
	// The first non-empty word after w, or else the first at all (w
	// itself if only its slots before c are left: they come last).
	m := q.words
	if after := m &^ (2<<w - 1); after != 0 {
		m = after
	}
	w = bits.TrailingZeros64(m) & (calWords - 1)
	return w<<6 + bits.TrailingZeros64(q.bits[w])
}

// advance makes b the calendar's first bucket (no event is due before
// it) and moves the heap's events it now covers into the calendar.
func (q *eventQueue) advance(b int64) {
	q.cur, q.floorAt = b, b<<q.shift
	if q.farB-b < calBuckets {
		for len(q.far) > 0 && q.bucket(q.far[0].at)-b < calBuckets {
			e := q.far[0]
			q.far.pop()
			q.ringPush(q.bucket(e.at), e)
		}
		q.farMoved()
	}
}

func (q *eventQueue) clearSlot(s int) {
	w := s >> 6
	if q.bits[w] &^= 1 << (s & 63); q.bits[w] == 0 {
		q.words &^= 1 << w
	}
}

// pop removes the entry front returned.
func (q *eventQueue) pop() {
	s := q.cur & (calBuckets - 1)
	id := q.head[s]
	n := &q.nodes[id]
	q.head[s] = n.next
	if n.next == 0 {
		q.tail[s] = 0
		q.clearSlot(int(s))
	}
	n.e = entry{} // drop the pointers so fired timers can be freed
	n.next, q.free = q.free, id
	q.ringN--
}

// lower makes t's bucket the calendar's first, for a push due before
// floor: front moves cur to the next event's bucket even when that event
// does not fire then (RunUntil looks at it and stops at its bound, Next
// reports it), and the clock may then schedule before it. No event is due
// before t. Every event goes through the heap, which orders by (time,
// seq), and the calendar takes back what it covers.
func (q *eventQueue) lower(t int64) {
	for s := range q.head {
		for id := q.head[s]; id != 0; {
			n := &q.nodes[id]
			q.far.push(n.e)
			next := n.next
			n.e, n.next, q.free = entry{}, q.free, id
			id = next
		}
		q.head[s], q.tail[s] = 0, 0
	}
	q.bits, q.words = [calWords]uint64{}, 0
	q.ringN = 0
	q.farMoved()
	q.advance(q.bucket(t))
}

// filter drops the entries for which drop is true, keeping the order of
// the others.
func (q *eventQueue) filter(drop func(*entry) bool) {
	for s := range q.head {
		var prev int32
		for id := q.head[s]; id != 0; {
			n := &q.nodes[id]
			next := n.next
			if !drop(&n.e) {
				prev, id = id, next
				continue
			}
			if prev == 0 {
				q.head[s] = next
			} else {
				q.nodes[prev].next = next
			}
			n.e, n.next, q.free = entry{}, q.free, id
			q.ringN--
			id = next
		}
		q.tail[s] = prev
		if prev == 0 {
			q.head[s] = 0
			q.clearSlot(s)
		}
	}
	kept := q.far[:0]
	for _, e := range q.far {
		if !drop(&e) {
			kept = append(kept, e)
		}
	}
	clear(q.far[len(kept):])
	q.far = kept
	q.far.init()
	q.farMoved()
}

// len is the number of entries queued, stopped ones included.
func (q *eventQueue) len() int { return q.ringN + len(q.far) }

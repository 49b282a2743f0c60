package flowtable

import (
	"container/heap"
	"time"
)

// The expiry heap holds one item per entry with a timeout, keyed by the
// deadline computed when it was queued. Idle deadlines move later with every
// hit, but Hit does not touch the heap (it is on the packet path): when an
// item comes due, Expire recomputes the real deadline and re-queues the entry
// if it was used meanwhile. Items of entries that were removed or replaced
// are recognised as stale (queuedAt differs) and dropped lazily; the heap is
// rebuilt when stale items outnumber live ones.

type expiryItem struct {
	at time.Time
	id uint64
}

type expiryHeap []expiryItem

func (h expiryHeap) Len() int { return len(h) }
func (h expiryHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].id < h[j].id
}
func (h expiryHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)   { *h = append(*h, x.(expiryItem)) }
func (h *expiryHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// expiryState is the per-entry bookkeeping of the heap.
type expiryState struct {
	queued   bool
	queuedAt time.Time
}

func (t *Table) scheduleExpiry(e *Entry) {
	at, _, ok := e.Deadline()
	if !ok {
		t.removeFromExpiry(e)
		return
	}
	if !e.exp.queued {
		t.queuedLive++
	}
	e.exp = expiryState{queued: true, queuedAt: at}
	heap.Push(&t.expiry, expiryItem{at: at, id: e.ID})
	t.maybeCompact()
}

func (t *Table) removeFromExpiry(e *Entry) {
	if e.exp.queued {
		t.queuedLive--
	}
	e.exp = expiryState{}
}

func (t *Table) valid(it expiryItem) (*Entry, bool) {
	e, ok := t.byID[it.id]
	if !ok || !e.exp.queued || !e.exp.queuedAt.Equal(it.at) {
		return nil, false
	}
	return e, true
}

func (t *Table) maybeCompact() {
	if len(t.expiry) <= 2*t.queuedLive+64 {
		return
	}
	live := t.expiry[:0]
	for _, it := range t.expiry {
		if _, ok := t.valid(it); ok {
			live = append(live, it)
		}
	}
	clear(t.expiry[len(live):])
	t.expiry = live
	heap.Init(&t.expiry)
}

// NextExpiry is the earliest time at which Expire may remove something;
// false when no entry has a timeout. It may be earlier than the real next
// removal (an idle entry used since it was queued): calling Expire then
// just re-queues it.
func (t *Table) NextExpiry() (time.Time, bool) {
	for len(t.expiry) > 0 {
		it := t.expiry[0]
		if _, ok := t.valid(it); ok {
			return it.at, true
		}
		heap.Pop(&t.expiry)
	}
	return time.Time{}, false
}

// Expire removes every entry whose idle or hard timeout has passed at now,
// in deadline order, and returns them with their reasons.
func (t *Table) Expire(now time.Time) []Removal {
	var out []Removal
	for len(t.expiry) > 0 && !t.expiry[0].at.After(now) {
		it := heap.Pop(&t.expiry).(expiryItem)
		e, ok := t.valid(it)
		if !ok {
			continue
		}
		at, reason, _ := e.Deadline()
		if !at.After(now) {
			out = append(out, t.remove(e, reason))
			continue
		}
		e.exp.queuedAt = at
		heap.Push(&t.expiry, expiryItem{at: at, id: e.ID})
	}
	return out
}

package dataplane

import (
	"container/list"
	"fmt"
	"strings"
)

// Eviction chooses which TCAM entry leaves for the backing table when a
// slot is needed. The Table reports every entry that enters or leaves the
// TCAM and every TCAM hit; Victim must name an entry currently reported as
// in the TCAM. A new policy implements this interface and gets a case in
// EvictionByName.
type Eviction interface {
	// Name is the policy's name as used in profiles and reports.
	Name() string
	// Inserted: id entered the TCAM.
	Inserted(id uint64)
	// Used: a packet hit id in the TCAM.
	Used(id uint64)
	// Removed: id left the TCAM (evicted or deleted).
	Removed(id uint64)
	// Victim names the entry to evict; false when the TCAM is empty.
	Victim() (uint64, bool)
}

// Names of the policies EvictionByName knows.
const (
	LRUName             = "lru"
	FIFOName            = "fifo"
	DefaultEvictionName = LRUName
)

// EvictionNames lists the names EvictionByName accepts.
func EvictionNames() []string { return []string{LRUName, FIFOName} }

// EvictionByName returns a fresh policy; "" means the default (LRU).
func EvictionByName(name string) (Eviction, error) {
	switch name {
	case LRUName, "":
		return NewLRU(), nil
	case FIFOName:
		return NewFIFO(), nil
	default:
		return nil, fmt.Errorf("dataplane: unknown eviction policy %q (known: %s)", name, strings.Join(EvictionNames(), ", "))
	}
}

// recency is an ordered set of IDs, most recent at the front. LRU moves an
// entry to the front on every hit; FIFO only on insert.
type recency struct {
	name       string
	touchOnUse bool
	order      *list.List // of uint64, front = most recent
	elems      map[uint64]*list.Element
}

// NewLRU evicts the least recently inserted-or-hit entry.
func NewLRU() Eviction { return newRecency(LRUName, true) }

// NewFIFO evicts the entry inserted longest ago, whatever its hits.
func NewFIFO() Eviction { return newRecency(FIFOName, false) }

func newRecency(name string, touchOnUse bool) *recency {
	return &recency{name: name, touchOnUse: touchOnUse, order: list.New(), elems: make(map[uint64]*list.Element)}
}

func (r *recency) Name() string { return r.name }

func (r *recency) Inserted(id uint64) {
	if el, ok := r.elems[id]; ok {
		r.order.MoveToFront(el)
		return
	}
	r.elems[id] = r.order.PushFront(id)
}

func (r *recency) Used(id uint64) {
	if !r.touchOnUse {
		return
	}
	if el, ok := r.elems[id]; ok {
		r.order.MoveToFront(el)
	}
}

func (r *recency) Removed(id uint64) {
	if el, ok := r.elems[id]; ok {
		r.order.Remove(el)
		delete(r.elems, id)
	}
}

func (r *recency) Victim() (uint64, bool) {
	el := r.order.Back()
	if el == nil {
		return 0, false
	}
	return el.Value.(uint64), true
}

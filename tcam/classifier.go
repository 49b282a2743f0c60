package tcam

import (
	"fmt"
	"slices"
)

// Classifier answers the same question as a TCAM lookup — the highest
// ranked entry matching a key — in software, fast enough for the live
// packet path. It is tuple-space search as in Open vSwitch's
// lib/classifier.c: entries are grouped by mask into subtables, each a hash
// map from masked value to the entries with that value; a lookup probes the
// subtables in order of their best entry and stops as soon as no remaining
// subtable can beat the best match found. An exact-match cache in front of
// it answers repeated keys with one probe.
//
// Given the same TieBreak and the same set of entries, its answers are the
// TCAM's. It is not safe for concurrent use.
type Classifier struct {
	tie TieBreak
	// subtables sorted by their best entry, best first.
	subtables []*subtable
	byMask    map[Key]*subtable
	byID      map[uint64]*rule
	cache     exactCache
	stats     ClassifierStats
}

// ClassifierStats counts lookup work, for metrics and benchmarks.
type ClassifierStats struct {
	Lookups   uint64 // Lookup calls
	CacheHits uint64 // answered by the exact-match cache
	Probes    uint64 // subtable hash probes made on cache misses
}

type rule struct {
	e  Entry
	st *subtable
}

type subtable struct {
	mask    Key
	buckets map[Key][]*rule // masked value -> rules, best first
	size    int
	best    *rule // best rule in the whole subtable
}

// NewClassifier returns an empty classifier breaking ties with tie, with an
// exact-match cache of cacheSlots lines (rounded up to a power of two; 0
// disables the cache).
func NewClassifier(tie TieBreak, cacheSlots int) *Classifier {
	return &Classifier{
		tie:    tie,
		byMask: make(map[Key]*subtable),
		byID:   make(map[uint64]*rule),
		cache:  newExactCache(cacheSlots),
	}
}

// Len is the number of entries.
func (c *Classifier) Len() int { return len(c.byID) }

// Subtables is the number of distinct masks, i.e. the worst-case number of
// hash probes per lookup.
func (c *Classifier) Subtables() int { return len(c.subtables) }

// Stats returns the lookup counters.
func (c *Classifier) Stats() ClassifierStats { return c.stats }

// TieBreak is the classifier's tie rule.
func (c *Classifier) TieBreak() TieBreak { return c.tie }

// Insert adds e. IDs must be unique.
func (c *Classifier) Insert(e Entry) error {
	if _, dup := c.byID[e.ID]; dup {
		return fmt.Errorf("classifier: insert id %d: %w", e.ID, ErrDuplicateID)
	}
	e.Rule.Value = e.Rule.Value.Masked(&e.Rule.Mask)
	st := c.byMask[e.Rule.Mask]
	if st == nil {
		st = &subtable{mask: e.Rule.Mask, buckets: make(map[Key][]*rule)}
		c.byMask[st.mask] = st
		c.subtables = append(c.subtables, st)
	}
	r := &rule{e: e, st: st}
	b := st.buckets[e.Rule.Value]
	i, _ := slices.BinarySearchFunc(b, r, func(x, y *rule) int {
		if c.tie.Outranks(&x.e, &y.e) {
			return -1
		}
		return 1
	})
	st.buckets[e.Rule.Value] = slices.Insert(b, i, r)
	st.size++
	if st.best == nil || c.tie.Outranks(&e, &st.best.e) {
		st.best = r
	}
	c.byID[e.ID] = r
	c.resort()
	c.cache.invalidateAll()
	return nil
}

// Delete removes the entry with the given ID and returns it.
func (c *Classifier) Delete(id uint64) (Entry, error) {
	r, ok := c.byID[id]
	if !ok {
		return Entry{}, fmt.Errorf("classifier: delete id %d: %w", id, ErrNotFound)
	}
	delete(c.byID, id)
	st := r.st
	b := st.buckets[r.e.Rule.Value]
	b = slices.DeleteFunc(b, func(x *rule) bool { return x == r })
	if len(b) == 0 {
		delete(st.buckets, r.e.Rule.Value)
	} else {
		st.buckets[r.e.Rule.Value] = b
	}
	st.size--
	if st.size == 0 {
		delete(c.byMask, st.mask)
		c.subtables = slices.DeleteFunc(c.subtables, func(x *subtable) bool { return x == st })
	} else if st.best == r {
		st.best = nil
		for _, b := range st.buckets {
			if st.best == nil || c.tie.Outranks(&b[0].e, &st.best.e) {
				st.best = b[0]
			}
		}
	}
	c.resort()
	c.cache.invalidateAll()
	return r.e, nil
}

// resort orders the subtables best-first; there are few of them.
func (c *Classifier) resort() {
	slices.SortFunc(c.subtables, func(x, y *subtable) int {
		if c.tie.Outranks(&x.best.e, &y.best.e) {
			return -1
		}
		if c.tie.Outranks(&y.best.e, &x.best.e) {
			return 1
		}
		return 0
	})
}

// Lookup returns the highest-ranked entry matching k.
func (c *Classifier) Lookup(k Key) (Entry, bool) {
	c.stats.Lookups++
	line := c.cache.line(&k)
	if line != nil && line.hit(&k, c.cache.gen) {
		c.stats.CacheHits++
		if line.r == nil {
			return Entry{}, false
		}
		return line.r.e, true
	}
	best := c.search(&k)
	if line != nil {
		line.fill(&k, c.cache.gen, best)
	}
	if best == nil {
		return Entry{}, false
	}
	return best.e, true
}

// search is the tuple-space search proper.
func (c *Classifier) search(k *Key) *rule {
	var best *rule
	for _, st := range c.subtables {
		if best != nil && !c.tie.Outranks(&st.best.e, &best.e) {
			break // sorted: no later subtable holds anything better
		}
		c.stats.Probes++
		if b, ok := st.buckets[k.Masked(&st.mask)]; ok {
			if best == nil || c.tie.Outranks(&b[0].e, &best.e) {
				best = b[0]
			}
		}
	}
	return best
}

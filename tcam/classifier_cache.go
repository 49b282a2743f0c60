package tcam

// exactCache is a direct-mapped exact-match cache in front of the
// classifier (like Open vSwitch's EMC): one line per hash bucket, a
// colliding key simply replaces the line. It is bounded by construction and
// invalidated wholesale by bumping a generation number on any rule change,
// which costs O(1) however large the cache is. Misses are cached too, so a
// flood of table-miss packets does not search every subtable each time.
type exactCache struct {
	lines []cacheLine
	mask  uint64
	gen   uint64 // lines whose gen differs are empty
}

type cacheLine struct {
	key Key
	gen uint64
	r   *rule // nil: cached miss
}

func newExactCache(slots int) exactCache {
	if slots <= 0 {
		return exactCache{gen: 1}
	}
	n := 1
	for n < slots {
		n <<= 1
	}
	return exactCache{lines: make([]cacheLine, n), mask: uint64(n - 1), gen: 1}
}

func (c *exactCache) invalidateAll() { c.gen++ }

// line returns the line k maps to, or nil when the cache is disabled.
func (c *exactCache) line(k *Key) *cacheLine {
	if c.lines == nil {
		return nil
	}
	return &c.lines[hashKey(k)&c.mask]
}

func (l *cacheLine) hit(k *Key, gen uint64) bool { return l.gen == gen && l.key == *k }

func (l *cacheLine) fill(k *Key, gen uint64, r *rule) {
	l.key, l.gen, l.r = *k, gen, r
}

// hashKey mixes the five words of a key (multiply-xorshift, as in
// splitmix64); only the low bits are used, so every word must reach them.
func hashKey(k *Key) uint64 {
	h := uint64(0x9e3779b97f4a7c15)
	for _, w := range k {
		h ^= w
		h *= 0xbf58476d1ce4e5b9
		h ^= h >> 31
	}
	h *= 0x94d049bb133111eb
	return h ^ h>>29
}

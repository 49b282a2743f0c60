package controller

// macTable maps a MAC (macKey) to a port: open addressing with linear
// probing and a multiplicative hash, no deletion (the reactive app only
// learns and updates). Two lookups per PACKET_IN made the Go map 17 % of
// the controller's CPU under cbench load; a probe here is a multiply, a
// shift and usually one cache line.
type macTable struct {
	slots []macSlot // len is a power of two
	n     int
	shift uint // 64 - log2(len(slots))
}

type macSlot struct {
	key  uint64 // macKey+1; 0 marks an empty slot
	port uint16
}

func newMACTable() *macTable {
	const initial = 64
	return &macTable{slots: make([]macSlot, initial), shift: 64 - 6}
}

func (t *macTable) index(k uint64) uint64 {
	return (k * 0x9E3779B97F4A7C15) >> t.shift // Fibonacci hashing
}

// Len is the number of MACs stored.
func (t *macTable) Len() int { return t.n }

// Get returns the port of mac key k.
func (t *macTable) Get(k uint64) (uint16, bool) {
	k++
	mask := uint64(len(t.slots) - 1)
	for i := t.index(k); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.key == k {
			return s.port, true
		}
		if s.key == 0 {
			return 0, false
		}
	}
}

// Set stores k → port (inserting or updating).
func (t *macTable) Set(k uint64, port uint16) {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	k++
	mask := uint64(len(t.slots) - 1)
	for i := t.index(k); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.key == k {
			s.port = port
			return
		}
		if s.key == 0 {
			s.key, s.port = k, port
			t.n++
			return
		}
	}
}

// grow doubles the table (load factor stays at most 1/2).
func (t *macTable) grow() {
	old := t.slots
	t.slots = make([]macSlot, 2*len(old))
	t.shift--
	t.n = 0
	for _, s := range old {
		if s.key != 0 {
			t.Set(s.key-1, s.port)
		}
	}
}

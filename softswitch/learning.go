package softswitch

import "time"

// learningTable is the MAC table behind the NORMAL action and
// fail-standalone mode: source MAC -> port, bounded, oldest learned entry
// evicted first, entries valid for a fixed age.
type learningTable struct {
	limit int
	age   time.Duration
	macs  map[[6]byte]learned
	order [][6]byte // insertion order, for eviction
}

type learned struct {
	port uint16
	at   time.Time
}

func newLearningTable(limit int, age time.Duration) *learningTable {
	return &learningTable{limit: limit, age: age, macs: make(map[[6]byte]learned)}
}

func isMulticast(mac [6]byte) bool { return mac[0]&1 != 0 }

// learn records that src was seen on port.
func (l *learningTable) learn(src [6]byte, port uint16, now time.Time) {
	if isMulticast(src) {
		return
	}
	if _, ok := l.macs[src]; !ok {
		for len(l.macs) >= l.limit && len(l.order) > 0 {
			delete(l.macs, l.order[0])
			l.order = l.order[1:]
		}
		l.order = append(l.order, src)
	}
	l.macs[src] = learned{port: port, at: now}
	if len(l.order) > 2*l.limit { // drop keys already evicted or relearned
		l.compact()
	}
}

func (l *learningTable) compact() {
	seen := make(map[[6]byte]bool, len(l.macs))
	keep := l.order[:0]
	for _, m := range l.order {
		if _, ok := l.macs[m]; ok && !seen[m] {
			seen[m] = true
			keep = append(keep, m)
		}
	}
	l.order = keep
}

// lookup returns the port dst was learned on.
func (l *learningTable) lookup(dst [6]byte, now time.Time) (uint16, bool) {
	e, ok := l.macs[dst]
	if !ok || now.Sub(e.at) > l.age {
		return 0, false
	}
	return e.port, true
}

func (l *learningTable) forgetPort(port uint16) {
	for mac, e := range l.macs {
		if e.port == port {
			delete(l.macs, mac)
		}
	}
}

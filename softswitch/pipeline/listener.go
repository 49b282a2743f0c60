package pipeline

import (
	"github.com/pseudocong/pseudocong/softswitch/dataplane"
	"github.com/pseudocong/pseudocong/softswitch/flowtable"
)

// tableListener mirrors flow-table changes into the TCAM/backing
// placement. The switch calls it with its lock held.
type tableListener struct{ p *Pipeline }

// EntryAdded places a new rule: at no cost while preloading, otherwise by
// dataplane.Table.Add, billing the TCAM work to the running job and making
// packets that hit the rule wait until the job is done.
func (l tableListener) EntryAdded(e *flowtable.Entry) {
	p := l.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if st := p.preload; st != nil {
		st.id, st.added = e.ID, true
		st.err = p.table.Preload(e.TCAMEntry(), st.where)
		return
	}
	ch, err := p.table.Add(e.TCAMEntry())
	if err != nil {
		// The flow table's capacity is TCAM + backing (TableCapacity), so
		// this means a misconfigured switch; the rule stays usable in
		// software at the hit delay.
		p.log.Error("rule not placed", "id", e.ID, "err", err)
		return
	}
	p.chargeLocked(ch.CPUTime)
	if p.acc != nil {
		p.acc.added = append(p.acc.added, e.ID)
		p.openWaitLocked(e.ID, dataplane.PathInstallWait)
		if p.acc.buffered && p.handsBackDirect() {
			p.waits[e.ID].expectDirect = 1
		}
	}
}

// EntryModified: actions, cookie and counters live outside the TCAM (the
// entry ID is the action pointer), so nothing moves.
func (l tableListener) EntryModified(*flowtable.Entry) {}

// EntryRemoved invalidates the rule's TCAM entry (billed like an insert)
// or forgets it in the backing table; packets waiting for it are dropped.
func (l tableListener) EntryRemoved(e *flowtable.Entry, _ uint8) {
	p := l.p
	p.mu.Lock()
	defer p.mu.Unlock()
	ch, err := p.table.Remove(e.ID)
	if err != nil {
		return // never placed (see EntryAdded)
	}
	p.chargeLocked(ch.CPUTime)
	p.dropWaitLocked(e.ID, dataplane.DropRuleGone)
}

var _ flowtable.Listener = tableListener{}

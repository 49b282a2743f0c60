package pipeline

import (
	"time"

	"github.com/pseudocong/pseudocong/softswitch"
	"github.com/pseudocong/pseudocong/softswitch/dataplane"
)

// waitList is the packets waiting, in arrival order, for one rule to reach
// the TCAM, and the path they will be reported under.
type waitList struct {
	path string
	hits []softswitch.Hit
	// direct holds the packets the FLOW_MOD itself released (its
	// buffer_id) while an activation delay applies: the switch's CPU runs
	// them through its own table, which has the rule at once (Open
	// vSwitch executes them in userspace), so they go when the install
	// job ends; hits waits for the data path's activation.
	direct []softswitch.Hit
	// expectDirect counts the buffered packets still to come for direct
	// (set when a FLOW_MOD with a buffer_id adds the rule; the switch runs
	// that packet through the table right after, in the same event).
	expectDirect int
}

// openWaitLocked starts waiting for rule id (its install or swap-in job is
// in flight). It reports false if a wait list already exists.
func (p *Pipeline) openWaitLocked(id uint64, path string) bool {
	if _, ok := p.waits[id]; ok {
		return false
	}
	p.waits[id] = &waitList{path: path}
	return true
}

// holdLocked appends h to the wait list of its rule, or drops it when the
// hold bound is reached.
func (p *Pipeline) holdLocked(w *waitList, h softswitch.Hit) {
	if p.held >= p.opts.HoldLimit {
		p.dropLocked(dataplane.DropHoldFull)
		return
	}
	w.hits = append(w.hits, h)
	p.held++
	p.st.MaxHeld = max(p.st.MaxHeld, p.held)
	p.metrics.SetHeld(p.held)
}

// releaseLocked ends the wait for rule id: its packets enter the hit-delay
// line in arrival order (the rule is in the TCAM now).
func (p *Pipeline) releaseLocked(id uint64, now time.Time) {
	w, ok := p.waits[id]
	if !ok {
		return
	}
	delete(p.waits, id)
	p.releaseDirectLocked(w, now)
	p.held -= len(w.hits)
	p.metrics.SetHeld(p.held)
	for _, h := range w.hits {
		p.line.pushLocked(h, w.path, now)
	}
}

// holdDirectLocked holds h, released by the FLOW_MOD being applied, until
// that FLOW_MOD's job ends (waitList.direct).
func (p *Pipeline) holdDirectLocked(w *waitList, h softswitch.Hit) {
	if p.held >= p.opts.HoldLimit {
		p.dropLocked(dataplane.DropHoldFull)
		return
	}
	w.direct = append(w.direct, h)
	p.held++
	p.st.MaxHeld = max(p.st.MaxHeld, p.held)
	p.metrics.SetHeld(p.held)
}

// releaseDirectLocked sends w's direct packets on; the wait goes on.
func (p *Pipeline) releaseDirectLocked(w *waitList, now time.Time) {
	if len(w.direct) == 0 {
		return
	}
	p.held -= len(w.direct)
	p.metrics.SetHeld(p.held)
	line := p.directLine()
	for _, h := range w.direct {
		line.pushLocked(h, w.path, now)
	}
	w.direct = nil
}

// dropWaitLocked ends the wait for rule id dropping its packets (the rule
// was deleted, or its swap-in was refused).
func (p *Pipeline) dropWaitLocked(id uint64, reason string) {
	w, ok := p.waits[id]
	if !ok {
		return
	}
	delete(p.waits, id)
	p.held -= len(w.hits) + len(w.direct)
	p.metrics.SetHeld(p.held)
	for range len(w.hits) + len(w.direct) {
		p.dropLocked(reason)
	}
}

package flowtable

import (
	"time"

	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/tcam"
)

// Entry is one flow entry. The table owns it: callers may read it while
// they hold whatever guards the table, and must not change it except
// through the table.
type Entry struct {
	// ID is unique within the table and increases with installation order;
	// it is also the entry's tcam.Entry ID.
	ID uint64
	// Match is the normalized match (NormalizeMatch).
	Match openflow.Match
	// Rule is Match as a TCAM word.
	Rule tcam.Ternary
	// Priority is the OpenFlow priority; Effective the classifier priority
	// (EffectivePriority).
	Priority  uint16
	Effective uint32

	Cookie      uint64
	IdleTimeout uint16 // seconds, 0 = none
	HardTimeout uint16 // seconds, 0 = none
	Flags       uint16 // openflow.FlowModFlag*
	Actions     []openflow.Action

	Installed time.Time
	LastUsed  time.Time

	PacketCount uint64
	ByteCount   uint64

	exp expiryState
}

// TCAMEntry is the entry as a tcam.Classifier / TCAM holds it.
func (e *Entry) TCAMEntry() tcam.Entry {
	return tcam.Entry{Rule: e.Rule, Priority: e.Effective, ID: e.ID}
}

// Duration is how long the entry has been installed at now.
func (e *Entry) Duration(now time.Time) time.Duration {
	d := now.Sub(e.Installed)
	if d < 0 {
		return 0
	}
	return d
}

// Deadline is when the entry expires given its last use, and why; ok is
// false for a permanent entry. The earlier of the idle and hard deadlines
// wins; on a tie the hard timeout is reported, as Open vSwitch does.
func (e *Entry) Deadline() (at time.Time, reason uint8, ok bool) {
	if e.HardTimeout != 0 {
		at, reason, ok = e.Installed.Add(time.Duration(e.HardTimeout)*time.Second), openflow.FlowRemovedHardTimeout, true
	}
	if e.IdleTimeout != 0 {
		idle := e.LastUsed.Add(time.Duration(e.IdleTimeout) * time.Second)
		if !ok || idle.Before(at) {
			at, reason, ok = idle, openflow.FlowRemovedIdleTimeout, true
		}
	}
	return at, reason, ok
}

// OutputsTo reports whether the entry has an OUTPUT (or ENQUEUE) action
// towards port: the out_port filter of DELETE and of flow stats.
func (e *Entry) OutputsTo(port uint16) bool {
	return ActionsOutputTo(e.Actions, port)
}

// ActionsOutputTo reports whether actions contain an OUTPUT or ENQUEUE to
// port. OFPP_NONE matches every list.
func ActionsOutputTo(actions []openflow.Action, port uint16) bool {
	if port == openflow.PortNone {
		return true
	}
	for _, a := range actions {
		switch a := a.(type) {
		case openflow.ActionOutput:
			if a.Port == port {
				return true
			}
		case openflow.ActionEnqueue:
			if a.Port == port {
				return true
			}
		}
	}
	return false
}

// Removal is an entry taken out of the table and why
// (openflow.FlowRemovedIdleTimeout / HardTimeout / Delete).
type Removal struct {
	Entry  *Entry
	Reason uint8
}

// FlowRemoved builds the FLOW_REMOVED message for r at time now.
func (r Removal) FlowRemoved(now time.Time) *openflow.FlowRemoved {
	e := r.Entry
	d := e.Duration(now)
	return &openflow.FlowRemoved{
		Header:       openflow.Header{Version: openflow.Version, Type: openflow.TypeFlowRemoved},
		Match:        e.Match,
		Cookie:       e.Cookie,
		Priority:     e.Priority,
		Reason:       r.Reason,
		DurationSec:  uint32(d / time.Second),
		DurationNsec: uint32(d % time.Second),
		IdleTimeout:  e.IdleTimeout,
		PacketCount:  e.PacketCount,
		ByteCount:    e.ByteCount,
	}
}

// Listener observes every change of a table, synchronously, in the order
// the changes happen. The entry must not be modified by the listener.
type Listener interface {
	// EntryAdded: a new entry is in the table (ADD, or MODIFY acting as
	// ADD).
	EntryAdded(e *Entry)
	// EntryModified: an entry's actions changed (MODIFY), or an ADD with
	// the same match and priority replaced it in place (same ID; actions,
	// cookie, timeouts and flags new; counters reset).
	EntryModified(e *Entry)
	// EntryRemoved: the entry left the table (DELETE, timeout).
	EntryRemoved(e *Entry, reason uint8)
}

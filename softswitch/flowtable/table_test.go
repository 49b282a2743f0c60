package flowtable

import (
	"errors"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/tcam"
)

func mustApply(t *testing.T, tb *Table, m *openflow.FlowMod) Result {
	t.Helper()
	r, err := tb.Apply(m, t0)
	if err != nil {
		t.Fatalf("apply %s: %v", openflow.FlowModCommandName(m.Command), err)
	}
	return r
}

func flowErrCode(err error) (openflow.ErrorType, uint16) {
	var fe *Error
	if !errors.As(err, &fe) {
		return 0xffff, 0xffff
	}
	return fe.Type, fe.Code
}

func TestAddReplacesIdenticalAndResetsCounters(t *testing.T) {
	tb := New(Config{})
	rec := &recListener{}
	tb.SetListener(rec)
	m := wildDst(ip(10, 0, 0, 0), 8)
	r1 := mustApply(t, tb, fm(openflow.FlowModAdd, m, 100, out(1)))
	tb.Hit(r1.Added, 60, t0.Add(time.Second))
	r2 := mustApply(t, tb, fm(openflow.FlowModAdd, m, 100, out(2)))
	if !r2.Replaced || r2.Added.ID != r1.Added.ID {
		t.Fatalf("identical ADD must replace in place: %+v", r2)
	}
	if tb.Len() != 1 || r2.Added.PacketCount != 0 || r2.Added.Actions[0] != (openflow.ActionOutput{Port: 2}) {
		t.Fatalf("after replace: len %d, entry %+v", tb.Len(), r2.Added)
	}
	// A different priority is a different entry.
	mustApply(t, tb, fm(openflow.FlowModAdd, m, 101, out(3)))
	if tb.Len() != 2 {
		t.Fatalf("len %d, want 2", tb.Len())
	}
	if got := rec.events; len(got) != 3 || got[0] != "add" || got[1] != "mod" || got[2] != "add" {
		t.Fatalf("events %v", got)
	}
}

func TestCheckOverlap(t *testing.T) {
	cases := []struct {
		name    string
		second  openflow.Match
		prio    uint16
		wantErr bool
	}{
		{"overlapping same priority", wildDst(ip(10, 1, 0, 0), 16), 100, true},
		{"overlapping other priority", wildDst(ip(10, 1, 0, 0), 16), 101, false},
		{"disjoint same priority", wildDst(ip(11, 0, 0, 0), 8), 100, false},
		{"identical same priority", wildDst(ip(10, 0, 0, 0), 8), 100, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tb := New(Config{})
			mustApply(t, tb, fm(openflow.FlowModAdd, wildDst(ip(10, 0, 0, 0), 8), 100, out(1)))
			req := fm(openflow.FlowModAdd, c.second, c.prio, out(2))
			req.Flags = openflow.FlowModFlagCheckOverlap
			_, err := tb.Apply(req, t0)
			if c.wantErr {
				typ, code := flowErrCode(err)
				if typ != openflow.ErrorTypeFlowModFailed || code != uint16(openflow.FlowModFailedOverlap) {
					t.Fatalf("want OVERLAP error, got %v", err)
				}
				if tb.Len() != 1 {
					t.Fatal("refused ADD changed the table")
				}
			} else if err != nil {
				t.Fatalf("unexpected error %v", err)
			}
		})
	}
}

func TestTableFull(t *testing.T) {
	tb := New(Config{Capacity: 2})
	mustApply(t, tb, fm(openflow.FlowModAdd, wildDst(ip(10, 0, 0, 1), 32), 1, out(1)))
	mustApply(t, tb, fm(openflow.FlowModAdd, wildDst(ip(10, 0, 0, 2), 32), 1, out(1)))
	_, err := tb.Apply(fm(openflow.FlowModAdd, wildDst(ip(10, 0, 0, 3), 32), 1, out(1)), t0)
	if typ, code := flowErrCode(err); typ != openflow.ErrorTypeFlowModFailed || code != uint16(openflow.FlowModFailedAllTablesFull) {
		t.Fatalf("want ALL_TABLES_FULL, got %v", err)
	}
	// Replacing an existing entry needs no room.
	mustApply(t, tb, fm(openflow.FlowModAdd, wildDst(ip(10, 0, 0, 2), 32), 1, out(2)))
}

func TestBadCommand(t *testing.T) {
	_, err := New(Config{}).Apply(fm(9, openflow.MatchAll(), 1, nil), t0)
	if typ, code := flowErrCode(err); typ != openflow.ErrorTypeFlowModFailed || code != uint16(openflow.FlowModFailedBadCommand) {
		t.Fatalf("want BAD_COMMAND, got %v", err)
	}
}

// threeEntries installs /8, /16 and /24 prefixes (priorities 8, 16, 24)
// with outputs 1, 2, 3.
func threeEntries(t *testing.T) *Table {
	tb := New(Config{})
	mustApply(t, tb, fm(openflow.FlowModAdd, wildDst(ip(10, 0, 0, 0), 8), 8, out(1)))
	mustApply(t, tb, fm(openflow.FlowModAdd, wildDst(ip(10, 1, 0, 0), 16), 16, out(2)))
	mustApply(t, tb, fm(openflow.FlowModAdd, wildDst(ip(10, 1, 2, 0), 24), 24, out(3)))
	return tb
}

func outputs(tb *Table) []uint16 {
	var ports []uint16
	for _, e := range tb.Entries() {
		ports = append(ports, e.Actions[0].(openflow.ActionOutput).Port)
	}
	return ports
}

func TestModifyStrictVsNonStrict(t *testing.T) {
	cases := []struct {
		name      string
		cmd       uint16
		match     openflow.Match
		prio      uint16
		wantPorts []uint16 // outputs of the entries after the MODIFY, in install order
		wantAdded bool
	}{
		{"non-strict /16 modifies /16 and /24", openflow.FlowModModify, wildDst(ip(10, 1, 0, 0), 16), 0, []uint16{1, 9, 9}, false},
		{"non-strict all modifies everything", openflow.FlowModModify, openflow.MatchAll(), 0, []uint16{9, 9, 9}, false},
		{"strict /16 prio 16 modifies only it", openflow.FlowModModifyStrict, wildDst(ip(10, 1, 0, 0), 16), 16, []uint16{1, 9, 3}, false},
		{"strict with wrong priority adds", openflow.FlowModModifyStrict, wildDst(ip(10, 1, 0, 0), 16), 17, []uint16{1, 2, 3, 9}, true},
		{"non-strict matching nothing adds", openflow.FlowModModify, wildDst(ip(11, 0, 0, 0), 8), 5, []uint16{1, 2, 3, 9}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tb := threeEntries(t)
			r := mustApply(t, tb, fm(c.cmd, c.match, c.prio, out(9)))
			if (r.Added != nil) != c.wantAdded {
				t.Fatalf("added %v, want %v", r.Added != nil, c.wantAdded)
			}
			if got := outputs(tb); !equalU16(got, c.wantPorts) {
				t.Fatalf("outputs %v, want %v", got, c.wantPorts)
			}
		})
	}
}

func TestModifyKeepsCountersAndTimeouts(t *testing.T) {
	tb := New(Config{})
	add := fm(openflow.FlowModAdd, wildDst(ip(10, 0, 0, 0), 8), 5, out(1))
	add.IdleTimeout, add.Cookie = 30, 77
	e := mustApply(t, tb, add).Added
	tb.Hit(e, 100, t0)
	mod := fm(openflow.FlowModModify, wildDst(ip(10, 0, 0, 0), 8), 5, out(2))
	mod.Cookie = 99
	mustApply(t, tb, mod)
	if e.PacketCount != 1 || e.IdleTimeout != 30 || e.Cookie != 77 || e.Actions[0] != (openflow.ActionOutput{Port: 2}) {
		t.Fatalf("after MODIFY: %+v", e)
	}
}

func TestDeleteStrictNonStrictOutPort(t *testing.T) {
	cases := []struct {
		name      string
		cmd       uint16
		match     openflow.Match
		prio      uint16
		outPort   uint16
		wantPorts []uint16 // remaining entries' outputs
	}{
		{"non-strict /16 deletes /16 and /24", openflow.FlowModDelete, wildDst(ip(10, 1, 0, 0), 16), 0, openflow.PortNone, []uint16{1}},
		{"non-strict all deletes all", openflow.FlowModDelete, openflow.MatchAll(), 0, openflow.PortNone, nil},
		{"non-strict all with out_port 2", openflow.FlowModDelete, openflow.MatchAll(), 0, 2, []uint16{1, 3}},
		{"non-strict all with unused out_port", openflow.FlowModDelete, openflow.MatchAll(), 0, 7, []uint16{1, 2, 3}},
		{"strict /16 prio 16", openflow.FlowModDeleteStrict, wildDst(ip(10, 1, 0, 0), 16), 16, openflow.PortNone, []uint16{1, 3}},
		{"strict /16 wrong prio", openflow.FlowModDeleteStrict, wildDst(ip(10, 1, 0, 0), 16), 15, openflow.PortNone, []uint16{1, 2, 3}},
		{"strict /16 wrong out_port", openflow.FlowModDeleteStrict, wildDst(ip(10, 1, 0, 0), 16), 16, 1, []uint16{1, 2, 3}},
		{"non-strict more specific than entries", openflow.FlowModDelete, wildDst(ip(10, 1, 2, 3), 32), 0, openflow.PortNone, []uint16{1, 2, 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tb := threeEntries(t)
			rec := &recListener{}
			tb.SetListener(rec)
			req := fm(c.cmd, c.match, c.prio, nil)
			req.OutPort = c.outPort
			r := mustApply(t, tb, req)
			if got := outputs(tb); !equalU16(got, c.wantPorts) {
				t.Fatalf("remaining %v, want %v", got, c.wantPorts)
			}
			if len(r.Removed) != 3-len(c.wantPorts) || len(rec.events) != len(r.Removed) {
				t.Fatalf("removed %d, events %v", len(r.Removed), rec.events)
			}
			for _, rm := range r.Removed {
				if rm.Reason != openflow.FlowRemovedDelete {
					t.Fatalf("reason %d", rm.Reason)
				}
			}
		})
	}
}

func fieldsTo(dst uint32) tcam.Fields {
	return tcam.Fields{InPort: 1, DlVlan: openflow.VlanNone, DlType: 0x0800, NwProto: 6, NwDst: dst}
}

func TestLookupLongestPriorityWins(t *testing.T) {
	tb := threeEntries(t)
	cases := []struct {
		dst  uint32
		want uint16 // output port, 0 = miss
	}{
		{ip(10, 1, 2, 3), 3}, {ip(10, 1, 3, 3), 2}, {ip(10, 2, 0, 1), 1}, {ip(11, 0, 0, 1), 0},
	}
	for _, c := range cases {
		f := fieldsTo(c.dst)
		e := tb.Lookup(&f)
		var got uint16
		if e != nil {
			got = e.Actions[0].(openflow.ActionOutput).Port
		}
		if got != c.want {
			t.Errorf("dst %#x: got port %d want %d", c.dst, got, c.want)
		}
	}
	if tb.Lookups() != 4 || tb.Matched() != 3 {
		t.Fatalf("lookups %d matched %d", tb.Lookups(), tb.Matched())
	}
}

func TestExactMatchOutranksWildcard(t *testing.T) {
	tb := New(Config{})
	ex := exactMatch(1, ip(10, 0, 0, 1), ip(10, 0, 0, 2), 1000, 80)
	mustApply(t, tb, fm(openflow.FlowModAdd, ex, 0, out(1)))                       // exact, lowest priority
	mustApply(t, tb, fm(openflow.FlowModAdd, openflow.MatchAll(), 0xffff, out(2))) // wildcard, highest
	f := matchFields(&ex)
	e := tb.Lookup(&f)
	if e == nil || e.Actions[0] != (openflow.ActionOutput{Port: 1}) {
		t.Fatalf("exact-match entry must win, got %+v", e)
	}
	other := f
	other.TpDst = 81
	if e := tb.Lookup(&other); e == nil || e.Actions[0] != (openflow.ActionOutput{Port: 2}) {
		t.Fatalf("other packet must hit the wildcard entry, got %+v", e)
	}
}

func TestTimeouts(t *testing.T) {
	cases := []struct {
		name       string
		idle, hard uint16
		hits       []time.Duration // hit times after t0
		wantAt     time.Duration
		wantReason uint8
	}{
		{"idle unused", 10, 0, nil, 10 * time.Second, openflow.FlowRemovedIdleTimeout},
		{"idle refreshed by hits", 10, 0, []time.Duration{5 * time.Second, 12 * time.Second}, 22 * time.Second, openflow.FlowRemovedIdleTimeout},
		{"hard despite hits", 0, 15, []time.Duration{5 * time.Second, 12 * time.Second}, 15 * time.Second, openflow.FlowRemovedHardTimeout},
		{"hard before idle", 10, 8, nil, 8 * time.Second, openflow.FlowRemovedHardTimeout},
		{"idle before hard", 3, 8, nil, 3 * time.Second, openflow.FlowRemovedIdleTimeout},
		// Both timeouts due at the same instant: FLOW_REMOVED says HARD.
		// OpenFlow 1.0 does not say; Open vSwitch (the switch this one is
		// compared with) checks the hard timeout first and the idle one
		// only if the rule is not yet hard-expired (ofproto-dpif.c,
		// rule_expire), so a tie reports OFPRR_HARD_TIMEOUT. Equal
		// timeouts and no hits tie; so does an idle deadline that hits
		// push onto the hard one (hit at 5 s + idle 10 s = hard 15 s).
		{"idle == hard: hard wins", 10, 10, nil, 10 * time.Second, openflow.FlowRemovedHardTimeout},
		{"idle refreshed onto hard: hard wins", 10, 15, []time.Duration{5 * time.Second}, 15 * time.Second, openflow.FlowRemovedHardTimeout},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tb := New(Config{})
			add := fm(openflow.FlowModAdd, wildDst(ip(10, 0, 0, 0), 8), 1, out(1))
			add.IdleTimeout, add.HardTimeout = c.idle, c.hard
			e := mustApply(t, tb, add).Added
			// Drive time in 1 s steps as a periodic caller would, hitting
			// the entry at the given times.
			var removedAt time.Duration = -1
			var reason uint8
			for now := time.Duration(0); now <= 60*time.Second && removedAt < 0; now += time.Second {
				for _, h := range c.hits {
					if h == now {
						tb.Hit(e, 1, t0.Add(now))
					}
				}
				for _, r := range tb.Expire(t0.Add(now)) {
					removedAt, reason = now, r.Reason
				}
			}
			if removedAt != c.wantAt || reason != c.wantReason {
				t.Fatalf("removed at %v reason %d, want %v reason %d", removedAt, reason, c.wantAt, c.wantReason)
			}
			if tb.Len() != 0 {
				t.Fatal("entry still present")
			}
		})
	}
}

func TestNextExpiryAndStaleItems(t *testing.T) {
	tb := New(Config{})
	if _, ok := tb.NextExpiry(); ok {
		t.Fatal("empty table has no expiry")
	}
	add := fm(openflow.FlowModAdd, wildDst(ip(10, 0, 0, 0), 8), 1, out(1))
	add.HardTimeout = 10
	mustApply(t, tb, add)
	if at, ok := tb.NextExpiry(); !ok || !at.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("next expiry %v %v", at, ok)
	}
	// Replacing with a permanent entry leaves only a stale heap item.
	add.HardTimeout = 0
	mustApply(t, tb, add)
	if at, ok := tb.NextExpiry(); ok {
		t.Fatalf("permanent entry must not expire, got %v", at)
	}
	if got := tb.Expire(t0.Add(time.Hour)); len(got) != 0 {
		t.Fatalf("expired %d entries", len(got))
	}
	// Many replacements do not grow the heap without bound.
	for i := range 1000 {
		add.HardTimeout = uint16(100 + i)
		mustApply(t, tb, add)
	}
	if len(tb.expiry) > 2*tb.queuedLive+64 {
		t.Fatalf("heap has %d items for %d live", len(tb.expiry), tb.queuedLive)
	}
}

func TestSelectAndFlowRemoved(t *testing.T) {
	tb := threeEntries(t)
	sel := tb.Select(wildDst(ip(10, 1, 0, 0), 16), openflow.PortNone)
	if len(sel) != 2 || sel[0].Priority != 16 || sel[1].Priority != 24 {
		t.Fatalf("select: %d entries", len(sel))
	}
	e := sel[0]
	tb.Hit(e, 1500, t0)
	fr := Removal{Entry: e, Reason: openflow.FlowRemovedDelete}.FlowRemoved(t0.Add(2500 * time.Millisecond))
	if fr.DurationSec != 2 || fr.DurationNsec != 500000000 || fr.ByteCount != 1500 || fr.Priority != 16 || fr.Match != e.Match {
		t.Fatalf("flow removed %+v", fr)
	}
}

func equalU16(a, b []uint16) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

package tcam

import (
	"errors"
	"math/rand/v2"
	"testing"
)

// unitTiming counts one cycle per operation and no driver time.
func unitTiming() Timing {
	return Timing{ClockHz: 1e9, CyclesPerLookup: 1, CyclesPerWrite: 1, CyclesPerRead: 1, CyclesPerInvalidate: 1}
}

func mustNew(tb testing.TB, slots int, l Layout) *TCAM {
	tb.Helper()
	tc, err := New(slots, l, unitTiming())
	if err != nil {
		tb.Fatal(err)
	}
	return tc
}

// reference is the naive answer: scan every rule, the highest priority
// wins, ties broken as the layout says.
type reference struct {
	tie     TieBreak
	entries map[uint64]Entry
}

func newReference(tie TieBreak) *reference {
	return &reference{tie: tie, entries: map[uint64]Entry{}}
}

func (r *reference) lookup(k Key) (Entry, bool) {
	var best Entry
	found := false
	for _, e := range r.entries {
		if !e.Rule.Matches(&k) {
			continue
		}
		if !found || r.tie.Outranks(&e, &best) {
			best, found = e, true
		}
	}
	return best, found
}

// rankOrdered reports whether layout l keeps all entries in strict rank
// order by slot (the ordered layouts); the others only order overlapping
// entries.
func rankOrdered(l Layout) bool {
	switch l.(type) {
	case orderedLayout, gapLayout:
		return true
	}
	return false
}

// allLayouts is every layout LayoutByName knows, plus gap-k for small k.
func allLayouts(tb testing.TB) []Layout {
	var ls []Layout
	for _, name := range LayoutNames() {
		l, err := LayoutByName(name)
		if err != nil {
			tb.Fatal(err)
		}
		ls = append(ls, l)
	}
	return append(ls, GapK(1), GapK(3), Hermes(splitShadow))
}

// splitShadow is the shadow share of the extra hermes layout the tests
// run: large enough for small tables to hold split rules (maxSplit is
// half the shadow), which the default 5 % of a 4..43-slot table is not.
const splitShadow = 0.3

// checkInvariants verifies the TCAM's bookkeeping against its slots and
// the layout invariant: every pair of overlapping entries in rank order by
// slot, and for the ordered layouts all valid slots in strict rank order.
func checkInvariants(tb testing.TB, tc *TCAM) {
	tb.Helper()
	for i, a := range tc.valid {
		for _, b := range tc.valid[i+1:] {
			ea, eb := &tc.slots[a].e, &tc.slots[b].e
			if overlaps(&ea.Rule, &eb.Rule) && !tc.tie.Outranks(ea, eb) {
				tb.Fatalf("overlapping slot %d (prio %d id %d) above slot %d (prio %d id %d) that outranks it",
					a, ea.Priority, ea.ID, b, eb.Priority, eb.ID)
			}
		}
	}
	if tc.Len() > tc.Usable() {
		tb.Fatalf("%d entries in %d usable slots", tc.Len(), tc.Usable())
	}
	ordered := rankOrdered(tc.layout)
	n, pieces := 0, 0
	prev := -1
	for s, sl := range tc.slots {
		if !sl.valid {
			continue
		}
		if n >= len(tc.valid) || int(tc.valid[n]) != s {
			tb.Fatalf("valid list %v disagrees with slot %d", tc.valid, s)
		}
		if sp, ok := tc.split[sl.e.ID]; ok {
			// A piece of a split entry: in the shadow, inside its rule,
			// clear of every cutter, listed with the entry.
			found := false
			for _, l := range sp.pieces {
				found = found || l == sl.loc
			}
			if !found || int(sl.loc.slot) != s || tc.where[sl.e.ID] != sp.pieces[0] {
				tb.Fatalf("piece of split entry %d in slot %d not recorded", sl.e.ID, s)
			}
			if !coversTernary(&sp.orig.Rule, &sl.e.Rule) || sl.e.Priority != sp.orig.Priority {
				tb.Fatalf("piece in slot %d is not inside split entry %d", s, sl.e.ID)
			}
			for _, c := range sp.cutters {
				if cl, ok := tc.where[c]; ok && overlaps(&tc.slots[cl.slot].e.Rule, &sl.e.Rule) {
					tb.Fatalf("piece of split entry %d in slot %d overlaps its cutter %d", sl.e.ID, s, c)
				}
			}
			pieces++
		} else if got, ok := tc.SlotOf(sl.e.ID); !ok || got != s || tc.where[sl.e.ID] != sl.loc {
			tb.Fatalf("SlotOf(%d) = %d,%v, entry sits in slot %d", sl.e.ID, got, ok, s)
		}
		if ordered && prev >= 0 && !tc.tie.Outranks(&tc.slots[prev].e, &sl.e) {
			tb.Fatalf("slot %d (prio %d id %d) does not outrank slot %d (prio %d id %d)",
				prev, tc.slots[prev].e.Priority, tc.slots[prev].e.ID, s, sl.e.Priority, sl.e.ID)
		}
		prev = s
		n++
	}
	extra := 0 // slots beyond one per entry
	for _, sp := range tc.split {
		extra += len(sp.pieces) - 1
	}
	if n != len(tc.valid) || n != len(tc.where)+extra {
		tb.Fatalf("%d valid slots (%d pieces), valid list %d, where %d, extra pieces %d", n, pieces, len(tc.valid), len(tc.where), extra)
	}
}

// coversTernary reports whether every key matching inner matches outer.
func coversTernary(outer, inner *Ternary) bool {
	for i := range outer.Mask {
		if outer.Mask[i]&^inner.Mask[i] != 0 || (outer.Value[i]^inner.Value[i])&outer.Mask[i] != 0 {
			return false
		}
	}
	return true
}

// fieldMask returns the Key bits of the fields set (non-zero) in f: pass
// all-ones values for the fields a rule matches on.
func fieldMask(f Fields) Key { return f.Key() }

var allOnesMAC = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// universe is a small set of field values so that random rules overlap and
// random packets hit them.
type universe struct{ rng *rand.Rand }

func (u universe) fields() Fields {
	r := u.rng
	macs := [][6]byte{{0, 0, 0, 0, 0, 1}, {0, 0, 0, 0, 0, 2}, {2, 0, 0, 0, 0, 3}}
	return Fields{
		InPort:    uint16(1 + r.IntN(3)),
		DlSrc:     macs[r.IntN(len(macs))],
		DlDst:     macs[r.IntN(len(macs))],
		DlVlan:    []uint16{0xffff, 10}[r.IntN(2)],
		DlVlanPcp: 0,
		DlType:    []uint16{0x0800, 0x0806}[r.IntN(2)],
		NwTos:     0,
		NwProto:   []uint8{6, 17}[r.IntN(2)],
		NwSrc:     0x0a000000 | uint32(r.IntN(8)),
		NwDst:     0x0a000100 | uint32(r.IntN(8)),
		TpSrc:     []uint16{1000, 2000}[r.IntN(2)],
		TpDst:     []uint16{22, 80, 443}[r.IntN(3)],
	}
}

// randomRule wildcards each field with probability 1/2 and gives the IP
// addresses random prefix lengths in 29..32 so prefixes nest.
func (u universe) randomRule() Ternary {
	r := u.rng
	var m Fields
	pick := func() bool { return r.IntN(2) == 0 }
	if pick() {
		m.InPort = 0xffff
	}
	if pick() {
		m.DlSrc = allOnesMAC
	}
	if pick() {
		m.DlDst = allOnesMAC
	}
	if pick() {
		m.DlVlan = 0xffff
	}
	if pick() {
		m.DlType = 0xffff
	}
	if pick() {
		m.NwProto = 0xff
	}
	if pick() {
		m.NwSrc = ^uint32(0) << (r.IntN(4))
	}
	if pick() {
		m.NwDst = ^uint32(0) << (r.IntN(4))
	}
	if pick() {
		m.TpSrc = 0xffff
	}
	if pick() {
		m.TpDst = 0xffff
	}
	mask := fieldMask(m)
	v := u.fields().Key()
	return Ternary{Value: v.Masked(&mask), Mask: mask}
}

// nestedRule matches IPv4 source prefixes of /28 to /32 within one /28
// and, half the time, one TCP destination port: rules nest and differ in
// a few bits, so hermes can split a rule around the main-slice rules that
// outrank it in a handful of pieces.
func (u universe) nestedRule() Ternary {
	r := u.rng
	m := Fields{DlType: 0xffff, NwSrc: ^uint32(0) << r.IntN(5)}
	v := Fields{DlType: 0x0800, NwSrc: 0x0a000000 | uint32(r.IntN(16)), NwProto: 6, TpDst: []uint16{22, 80}[r.IntN(2)]}
	if r.IntN(2) == 0 {
		m.NwProto, m.TpDst = 0xff, 0xffff
	}
	mask := fieldMask(m)
	k := v.Key()
	return Ternary{Value: k.Masked(&mask), Mask: mask}
}

// disjointRule matches exactly one source address, distinct per id, so
// rules built from distinct ids never overlap.
func (u universe) disjointRule(id uint64) Ternary {
	m := fieldMask(Fields{NwSrc: ^uint32(0), DlType: 0xffff})
	v := Fields{NwSrc: 0x0b000000 | uint32(id), DlType: 0x0800}.Key()
	return Ternary{Value: v, Mask: m}
}

// packetNear returns a packet that matches rule t in its cared-for bits
// and is random elsewhere (within the universe).
func (u universe) packetNear(t Ternary) Key {
	k := u.fields().Key()
	for i := range k {
		k[i] = k[i]&^t.Mask[i] | t.Value[i]&t.Mask[i]
	}
	return k
}

func isErr(err, target error) bool { return errors.Is(err, target) }

package dataplane

import (
	"errors"
	"testing"

	"github.com/pseudocong/pseudocong/tcam"
)

func TestAddAscendingCostsGrowWithOccupancy(t *testing.T) {
	d := newTable(t, 8, 0, tcam.Pica8Timing(), nil)
	for i := range 8 {
		ch, err := d.Add(rule(uint64(i+1), uint32(10+i)))
		if err != nil {
			t.Fatal(err)
		}
		// Highest-first: every ascending insert goes to slot 0 and shifts
		// all i entries already there.
		if ch.Cost.Moves != int64(i) || ch.DidEvict || ch.To != InTCAM || ch.From != Absent {
			t.Fatalf("insert %d: %+v", i, ch)
		}
		if want := cpu(1, int64(i), 0); ch.CPUTime != want {
			t.Fatalf("insert %d: cpu %v want %v", i, ch.CPUTime, want)
		}
	}
	if got := d.Stats().Cost.Moves; got != 28 {
		t.Errorf("total moves %d, want 8·7/2 = 28", got)
	}
}

func TestAddEvictsByPolicyWhenTCAMFull(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ev     Eviction
		used   []uint64
		victim uint64
	}{
		{"lru without hits evicts the oldest insert", NewLRU(), nil, 1},
		{"lru evicts the least recently hit", NewLRU(), []uint64{1, 3}, 2},
		{"fifo ignores hits", NewFIFO(), []uint64{1, 3}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newTable(t, 3, 5, tcam.Pica8Timing(), tc.ev)
			for id := uint64(1); id <= 3; id++ {
				if _, err := d.Add(rule(id, 100)); err != nil {
					t.Fatal(err)
				}
			}
			for _, id := range tc.used {
				d.Used(id)
			}
			ch, err := d.Add(rule(4, 100))
			if err != nil {
				t.Fatal(err)
			}
			if !ch.DidEvict || ch.Evicted != tc.victim {
				t.Fatalf("evicted %v/%d, want %d", ch.DidEvict, ch.Evicted, tc.victim)
			}
			if d.Where(tc.victim) != InBacking || d.Where(4) != InTCAM {
				t.Fatalf("victim at %v, new rule at %v", d.Where(tc.victim), d.Where(4))
			}
			if ch.Cost.Invalidates != 1 || ch.CPUTime != cpu(1, ch.Cost.Moves, 1) {
				t.Errorf("cost %+v cpu %v", ch.Cost, ch.CPUTime)
			}
			if n, b := d.Len(); n != 3 || b != 1 {
				t.Errorf("len %d/%d", n, b)
			}
		})
	}
}

func TestAddFailsWhenBothTablesFull(t *testing.T) {
	d := newTable(t, 2, 1, tcam.Pica8Timing(), nil)
	for id := uint64(1); id <= 3; id++ {
		if _, err := d.Add(rule(id, uint32(id))); err != nil {
			t.Fatalf("add %d: %v", id, err)
		}
	}
	before := d.Stats()
	_, err := d.Add(rule(4, 4))
	if !errors.Is(err, ErrFull) {
		t.Fatalf("err %v, want ErrFull", err)
	}
	if n, b := d.Len(); n != 2 || b != 1 || d.Where(4) != Absent || d.Stats() != before {
		t.Errorf("refused add changed state: len %d/%d where %v", n, b, d.Where(4))
	}
}

// A swap-in pays the full insert: the eviction's invalidate plus the
// insert with its shifts, exactly as a FLOW_MOD insert into the same TCAM.
func TestSwapInPaysFullInsertCost(t *testing.T) {
	d := newTable(t, 3, 4, tcam.Pica8Timing(), nil)
	for i, prio := range []uint32{30, 20, 10} {
		if err := d.Preload(rule(uint64(i+1), prio), InTCAM); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Preload(rule(4, 40), InBacking); err != nil {
		t.Fatal(err)
	}
	d.Used(1)
	d.Used(2) // id 3 is now least recently used
	ch, err := d.SwapIn(4)
	if err != nil {
		t.Fatal(err)
	}
	// id 3 leaves slot 2; priority 40 goes to slot 0 and ids 1, 2 shift down.
	if !ch.DidEvict || ch.Evicted != 3 || ch.Cost.Moves != 2 || ch.Cost.Invalidates != 1 {
		t.Fatalf("change %+v", ch)
	}
	if want := cpu(1, 2, 1); ch.CPUTime != want {
		t.Errorf("cpu %v, want %v", ch.CPUTime, want)
	}
	if d.Where(4) != InTCAM || d.Where(3) != InBacking || ch.From != InBacking {
		t.Errorf("where 4=%v 3=%v from=%v", d.Where(4), d.Where(3), ch.From)
	}
	if s, _ := d.TCAM().SlotOf(4); s != 0 {
		t.Errorf("swapped-in rule at slot %d, want 0", s)
	}
	// Reference: the same insert as a fresh TCAM op costs the same moves.
	ref, _ := tcam.New(3, tcam.HighestFirst(), tcam.Pica8Timing())
	for _, e := range []tcam.Entry{rule(1, 30), rule(2, 20)} {
		_, _ = ref.Insert(e)
	}
	rc, _ := ref.Insert(rule(4, 40))
	if rc.Moves != ch.Cost.Moves {
		t.Errorf("swap-in moves %d, fresh insert moves %d", ch.Cost.Moves, rc.Moves)
	}
	// Swapping in what is already there is free; an unknown id fails.
	if again, err := d.SwapIn(4); err != nil || again.CPUTime != 0 || again.DidEvict {
		t.Errorf("second swap-in %+v %v", again, err)
	}
	if _, err := d.SwapIn(99); !errors.Is(err, ErrNotFound) {
		t.Errorf("swap-in unknown: %v", err)
	}
	if s := d.Stats(); s.SwapIns != 1 || s.Evictions != 1 || s.Preloads != 4 {
		t.Errorf("stats %+v", s)
	}
}

func TestPreloadNeverEvicts(t *testing.T) {
	d := newTable(t, 1, 1, tcam.Pica8Timing(), nil)
	for _, tc := range []struct {
		name  string
		e     tcam.Entry
		where Location
		ok    bool
	}{
		{"tcam", rule(1, 1), InTCAM, true},
		{"tcam full", rule(2, 2), InTCAM, false},
		{"backing", rule(2, 2), InBacking, true},
		{"backing full", rule(3, 3), InBacking, false},
		{"duplicate", rule(1, 1), InBacking, false},
		{"bad location", rule(4, 4), Absent, false},
	} {
		err := d.Preload(tc.e, tc.where)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err %v", tc.name, err)
		}
	}
	if s := d.Stats(); s.Cost != (tcam.Cost{}) || s.CPUTime != 0 || s.Preloads != 2 {
		t.Errorf("preloads were priced: %+v", s)
	}
}

func TestRemove(t *testing.T) {
	d := newTable(t, 1, 1, tcam.Pica8Timing(), nil)
	_ = d.Preload(rule(1, 1), InTCAM)
	_ = d.Preload(rule(2, 2), InBacking)
	for _, tc := range []struct {
		id      uint64
		from    Location
		invalid int64
		err     error
	}{
		{1, InTCAM, 1, nil},
		{2, InBacking, 0, nil},
		{2, Absent, 0, ErrNotFound},
	} {
		ch, err := d.Remove(tc.id)
		if !errors.Is(err, tc.err) || (err == nil && (ch.From != tc.from || ch.Cost.Invalidates != tc.invalid)) {
			t.Errorf("remove %d: %+v %v", tc.id, ch, err)
		}
	}
	// The freed slot takes a new rule without eviction.
	if ch, err := d.Add(rule(3, 3)); err != nil || ch.DidEvict {
		t.Errorf("add after remove: %+v %v", ch, err)
	}
}

func TestEvictionByName(t *testing.T) {
	for _, tc := range []struct{ name, want string }{{"", "lru"}, {"lru", "lru"}, {"fifo", "fifo"}, {"mru", ""}} {
		ev, err := EvictionByName(tc.name)
		if tc.want == "" {
			if err == nil {
				t.Errorf("%q: no error", tc.name)
			}
			continue
		}
		if err != nil || ev.Name() != tc.want {
			t.Errorf("%q: %v %v", tc.name, ev, err)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	good := Config{TCAMSlots: 1, Layout: tcam.HighestFirst(), Timing: tcam.Pica8Timing()}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*Config){
		"slots":   func(c *Config) { c.TCAMSlots = 0 },
		"layout":  func(c *Config) { c.Layout = nil },
		"timing":  func(c *Config) { c.Timing.ClockHz = 0 },
		"backing": func(c *Config) { c.BackingCapacity = -1 },
	} {
		c := good
		mut(&c)
		if c.Validate() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

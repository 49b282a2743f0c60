package dataplane

import (
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/tcam"
)

// rule is a distinct exact-match entry per id, so overlaps never matter
// to placement tests.
func rule(id uint64, prio uint32) tcam.Entry {
	var k tcam.Key
	k[3] = id
	var all tcam.Key
	for i := range all {
		all[i] = ^uint64(0)
	}
	return tcam.Entry{Rule: tcam.Ternary{Value: k, Mask: all}, Priority: prio, ID: id}
}

func newTable(t *testing.T, slots, backing int, timing tcam.Timing, ev Eviction) *Table {
	t.Helper()
	d, err := New(Config{TCAMSlots: slots, Layout: tcam.HighestFirst(), Timing: timing, BackingCapacity: backing, Eviction: ev}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// cpu prices a change by hand with the Pica8 driver numbers.
func cpu(writes, moves, invalidates int64) time.Duration {
	tm := tcam.Pica8Timing()
	return time.Duration(writes)*tm.DriverPerWrite + time.Duration(moves)*tm.DriverPerMove +
		time.Duration(invalidates)*tm.DriverPerInvalidate
}

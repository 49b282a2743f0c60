package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/profile"
	"github.com/pseudocong/pseudocong/tcam"
)

func total(r result) int64 {
	s := int64(0)
	for _, m := range r.Curve {
		s += m
	}
	return s
}

// TestReportClaims checks, on a 200-slot table, what docs/tcam-layouts.md
// says about the layouts.
func TestReportClaims(t *testing.T) {
	p, err := profile.Load("pica8-p3297")
	if err != nil {
		t.Fatal(err)
	}
	const slots = 200
	get := func(layout, set, pat string) result {
		t.Helper()
		r, err := measure(layout, set, pat, slots, p.TCAM.Timing)
		if err != nil {
			t.Fatal(err)
		}
		if r.Inserts+r.Refused == 0 {
			t.Fatalf("%s/%s/%s: nothing inserted", layout, set, pat)
		}
		return r
	}
	gap := tcam.GapPrefix + "8"
	for _, set := range ruleSets {
		hf := get(tcam.HighestFirstName, set, "ascending")
		// gap-k: strictly fewer moves than highest-first on ascending
		// inserts, whatever the rule set.
		if g := get(gap, set, "ascending"); total(g) >= total(hf) {
			t.Errorf("%s ascending: gap-8 %d moves, highest-first %d", set, total(g), total(hf))
		}
		// The dependency-graph layouts never do worse than highest-first
		// on ascending inserts, and on disjoint rules make no move at all.
		for _, l := range []string{tcam.RuleTrisName, tcam.FastRuleName} {
			r := get(l, set, "ascending")
			if total(r) > total(hf) {
				t.Errorf("%s ascending: %s %d moves, highest-first %d", set, l, total(r), total(hf))
			}
			if set == "disjoint" && (total(r) != 0 || r.Refused != 0) {
				t.Errorf("disjoint ascending: %s made %d moves, refused %d", l, total(r), r.Refused)
			}
		}
		// Hermes: every insert under 5 ms with its shadow at 5 % of the
		// slots, for ascending, descending and constant priorities (and
		// random ones when rules are disjoint); the migration work is
		// deferred, not gone.
		for _, pat := range patterns {
			if pat == "random" && set == "overlapping" {
				// Rules that main-slice rules outrank go to main unless
				// they split in few pieces: no bound, but splitting must
				// not lose space (pieces live in the reserved shadow).
				if h := get(tcam.HermesName, set, pat); h.SpaceLost > 0.05 {
					t.Errorf("overlapping random: hermes loses %.1f %% of the space", 100*h.SpaceLost)
				}
				continue
			}
			h := get(tcam.HermesName, set, pat)
			if h.MaxLatency >= 5*time.Millisecond {
				t.Errorf("%s %s: hermes max insert %v", set, pat, h.MaxLatency)
			}
			if h.SpaceLost > 0.05 {
				t.Errorf("%s %s: hermes loses %.1f %% of the space", set, pat, 100*h.SpaceLost)
			}
			if pat == "ascending" && h.BackgroundMovesPerInsert == 0 {
				t.Errorf("%s ascending: hermes did no background work", set)
			}
		}
	}
	// Highest-first's ascending inserts cost N(N-1)/2 moves in all.
	if hf := get(tcam.HighestFirstName, "disjoint", "ascending"); total(hf) != slots*(slots-1)/2 {
		t.Errorf("highest-first ascending: %d moves, want %d", total(hf), slots*(slots-1)/2)
	}
}

// TestRunWritesReport runs the tool end to end on a small table.
func TestRunWritesReport(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.md")
	if err := run(40, "pica8-p3297", out, true); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range tcam.LayoutNames() {
		if !strings.Contains(string(b), "| "+name+" | overlapping | ascending |") {
			t.Errorf("report lacks %s", name)
		}
	}
	if _, err := os.Stat(strings.TrimSuffix(out, ".md") + ".png"); err != nil {
		t.Errorf("no plot: %v", err)
	}
}

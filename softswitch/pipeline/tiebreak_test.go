package pipeline

import (
	"strings"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/profile"
	"github.com/pseudocong/pseudocong/softswitch"
	"github.com/pseudocong/pseudocong/softswitch/dataplane"
	"github.com/pseudocong/pseudocong/softswitch/flowtable"
	"github.com/pseudocong/pseudocong/tcam"
)

// Two overlapping rules of equal priority: the rule the switch forwards
// with is the one the profile's TCAM layout lets win the tie (highest-first:
// the earlier, lowest-first: the later), and the TCAM model, holding both,
// answers the same.
func TestTieBreakFollowsTCAMLayout(t *testing.T) {
	// exact: host 1's nw_src, no actions (drop). wide: every IPv4 packet,
	// output 2. Which one the packet hits shows on port 2.
	exact := func() *openflow.FlowMod { m := ruleFor(1, 5); m.Actions = nil; return m }
	wide := func() *openflow.FlowMod {
		m := ruleFor(2, 5)
		m.Match = openflow.Match{Wildcards: openflow.WildcardAll &^ openflow.WildcardDlType, DlType: 0x0800}
		return m
	}
	type tieCase struct {
		name, layout  string
		first, second func() *openflow.FlowMod
		wantWinner    uint64 // flow entry ID: 1 = first installed, 2 = second
	}
	cases := []tieCase{
		{"highest-first, exact then wide", tcam.HighestFirstName, exact, wide, 1},
		{"highest-first, wide then exact", tcam.HighestFirstName, wide, exact, 1},
		{"lowest-first, exact then wide", tcam.LowestFirstName, exact, wide, 2},
		{"lowest-first, wide then exact", tcam.LowestFirstName, wide, exact, 2},
	}
	// The mitigation layouts all keep highest-first's tie rule.
	for _, name := range tcam.LayoutNames()[2:] {
		cases = append(cases, tieCase{name + ", exact then wide", name, exact, wide, 1},
			tieCase{name + ", wide then exact", name, wide, exact, 1})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prof := loadProfile(t, "pica8-p3297", func(p *profile.Profile) { p.TCAM.Layout = tc.layout })
			r := newRig(t, prof, Options{})
			r.at(0, func() { r.send(tc.first()) })
			r.at(time.Millisecond, func() { r.send(tc.second()) })
			pkt := frame(t, 1, 7)
			r.at(time.Second, func() { r.sw.Receive(1, pkt) })
			r.run()

			winnerOutputs := map[uint64]bool{1: tc.first().Actions != nil, 2: tc.second().Actions != nil}
			if got, want := len(r.deliveries()) == 1, winnerOutputs[tc.wantWinner]; got != want {
				t.Errorf("packet delivered = %v, want %v (rule %d wins)", got, want, tc.wantWinner)
			}
			for _, id := range []uint64{1, 2} {
				if w := r.p.Where(id); w != dataplane.InTCAM {
					t.Fatalf("rule %d is %v, want in the TCAM", id, w)
				}
			}
			fields, _ := flowtable.Extract(pkt, 1)
			r.p.mu.Lock()
			_, e, ok := r.p.table.TCAM().Lookup(fields.Key())
			r.p.mu.Unlock()
			if !ok || e.ID != tc.wantWinner {
				t.Errorf("TCAM lookup = rule %d (found %v), want rule %d", e.ID, ok, tc.wantWinner)
			}
		})
	}
}

// A switch whose flow table breaks ties differently from the profile's
// TCAM layout is refused.
func TestAttachRefusesMismatchedTieBreak(t *testing.T) {
	prof := loadProfile(t, "pica8-p3297", func(p *profile.Profile) { p.TCAM.Layout = tcam.LowestFirstName })
	sw := softswitch.New(clock.NewSim(t0), softswitch.Config{TableCapacity: TableCapacity(prof, 0)})
	p, err := Attach(sw, Options{Profile: prof})
	if err == nil {
		p.Stop()
		t.Fatal("Attach accepted a LowerIDWins switch for a lowest-first profile")
	}
	if !strings.Contains(err.Error(), "softswitch.Config.TieBreak") {
		t.Errorf("error %q does not say how to fix it", err)
	}
	sw = softswitch.New(clock.NewSim(t0), softswitch.Config{TableCapacity: TableCapacity(prof, 0), TieBreak: TieBreak(prof)})
	p, err = Attach(sw, Options{Profile: prof})
	if err != nil {
		t.Fatal(err)
	}
	p.Stop()
}

package flowtable

import (
	"testing"

	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/tcam"
)

// Two overlapping entries of equal priority: Config.TieBreak decides which
// answers, as the modelled TCAM layout would (the zero value keeps the
// earlier one).
func TestTieBreakFollowsConfig(t *testing.T) {
	for _, tc := range []struct {
		name     string
		tie      tcam.TieBreak
		wantPort uint16
	}{
		{"zero value: earlier wins", 0, 1},
		{"LowerIDWins: earlier wins", tcam.LowerIDWins, 1},
		{"HigherIDWins: later wins", tcam.HigherIDWins, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := New(Config{TieBreak: tc.tie, CacheSlots: 16})
			if tb.TieBreak() != tc.tie {
				t.Errorf("TieBreak() = %v, want %v", tb.TieBreak(), tc.tie)
			}
			mustApply(t, tb, fm(openflow.FlowModAdd, wildDst(ip(10, 0, 0, 0), 8), 5, out(1)))
			mustApply(t, tb, fm(openflow.FlowModAdd, wildDst(ip(10, 1, 0, 0), 16), 5, out(2)))
			f := tcam.Fields{DlType: 0x0800, NwDst: ip(10, 1, 2, 3)}
			for range 2 { // the second lookup goes through the exact-match cache
				e := tb.Lookup(&f)
				if e == nil {
					t.Fatal("no entry matched")
				}
				if got := e.Actions[0].(openflow.ActionOutput).Port; got != tc.wantPort {
					t.Errorf("hit the entry with output %d, want %d", got, tc.wantPort)
				}
			}
		})
	}
}

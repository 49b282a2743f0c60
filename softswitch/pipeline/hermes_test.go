package pipeline

import (
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/profile"
	"github.com/pseudocong/pseudocong/tcam"
)

// With the hermes layout, ascending-priority FLOW_MODs are installed into
// the shadow slice at once (every insert far cheaper than a highest-first
// shift) and the migration into the main slice runs as tcam_background
// jobs on the local CPU; with highest-first there are none.
func TestHermesMigratesInBackgroundJobs(t *testing.T) {
	const rules = 600
	run := func(layout string) (meanInsert float64, bgJobs uint64, pending bool, inTCAM int) {
		prof := loadProfile(t, "pica8-p3297", func(p *profile.Profile) {
			p.TCAM.Layout = layout
			p.TCAM.Capacity = 1000
			p.TCAM.Timing.SlowMoveFreeSlots = 0
		})
		r := newRig(t, prof, Options{})
		for i := range rules {
			r.at(time.Duration(i)*100*time.Millisecond, func() { r.send(ruleFor(i, uint16(1+i))) })
		}
		r.run()
		h := insertHistogram(t, r.reg)
		if h.GetSampleCount() != rules {
			t.Fatalf("%s: %d inserts observed", layout, h.GetSampleCount())
		}
		n, _ := r.p.Occupancy()
		r.p.mu.Lock()
		pending = r.p.table.Pending()
		r.p.mu.Unlock()
		return h.GetSampleSum() / rules, r.p.Stats().TCAMBackgroundJobs, pending, n
	}
	hf, hfJobs, _, hfN := run(tcam.HighestFirstName)
	he, heJobs, hePending, heN := run(tcam.HermesName)
	t.Logf("mean insert: highest-first %.3f ms, hermes %.3f ms; hermes background jobs %d", hf*1e3, he*1e3, heJobs)
	if hfJobs != 0 {
		t.Errorf("highest-first ran %d background jobs", hfJobs)
	}
	if heJobs == 0 || hePending {
		t.Errorf("hermes: %d background jobs, work still pending %v", heJobs, hePending)
	}
	if hfN != rules || heN != rules {
		t.Errorf("rules in the TCAM: highest-first %d, hermes %d, want %d", hfN, heN, rules)
	}
	if he >= hf/5 {
		t.Errorf("hermes mean insert %.3f ms is not far below highest-first's %.3f ms", he*1e3, hf*1e3)
	}
}

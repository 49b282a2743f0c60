package pipeline

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/profile"
)

// Random FLOW_MOD adds and deletes and packets against a tiny TCAM (many
// evictions and swap-ins) and a tiny hold bound: every packet that hit a
// rule is accounted for (delivered or dropped with a reason), nothing is
// left held or in flight, and the TCAM plus the backing table hold exactly
// the flow table's entries.
func TestRandomTrafficConservesPacketsAndRules(t *testing.T) {
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 99))
		prof := loadProfile(t, "pica8-p3297", func(p *profile.Profile) { p.TCAM.Capacity = 20 })
		r := newRig(t, prof, Options{BackingCapacity: 200, HoldLimit: 5, SwapInUpcall: seed%2 == 1})
		const hosts = 60
		seq := uint32(0)
		for step := range 3000 {
			at := time.Duration(step) * 3 * time.Millisecond
			host := rng.IntN(hosts)
			switch op := rng.IntN(10); {
			case op < 3:
				prio := uint16(1 + rng.IntN(500))
				r.at(at, func() { r.send(ruleFor(host, prio)) })
			case op < 4:
				r.at(at, func() {
					del := ruleFor(host, 0)
					del.Command, del.Actions = openflow.FlowModDelete, nil
					r.send(del)
				})
			default:
				// Mostly single packets, sometimes a burst for one host
				// (more than the hold bound when its rule must be
				// swapped in).
				burst := 1
				if op == 9 {
					burst = 8
				}
				for range burst {
					s := seq
					seq++
					r.at(at, func() { r.sw.Receive(1, frame(t, host, s)) })
				}
			}
		}
		var matched uint64
		var flows int
		r.at(20*time.Second, func() {
			r.send(&openflow.StatsRequest{Header: openflow.Header{Version: openflow.Version, Type: openflow.TypeStatsRequest, Xid: 1},
				Body: openflow.TableStatsRequest{}})
		})
		r.run()
		for _, m := range r.ctl.take() {
			if sr, ok := m.m.(*openflow.StatsReply); ok {
				if ts, ok := sr.Body.(openflow.TableStatsReply); ok {
					matched, flows = ts[0].MatchedCount, int(ts[0].ActiveCount)
				}
			}
		}
		ps := r.p.Stats()
		var delivered, dropped uint64
		for _, n := range ps.Delivered {
			delivered += n
		}
		for _, n := range ps.Drops {
			dropped += n
		}
		if ps.Held != 0 || ps.InFlight != 0 {
			t.Errorf("seed %d: %d held, %d in flight after the run", seed, ps.Held, ps.InFlight)
		}
		if delivered+dropped != matched || matched == 0 {
			t.Errorf("seed %d: %d hits, %d delivered + %d dropped (%v)", seed, matched, delivered, dropped, ps.Drops)
		}
		if got := len(r.deliveries()); uint64(got) != delivered {
			t.Errorf("seed %d: port saw %d frames, pipeline delivered %d", seed, got, delivered)
		}
		n, b := r.p.Occupancy()
		if n+b != flows {
			t.Errorf("seed %d: %d tcam + %d backing rules for %d flow entries", seed, n, b, flows)
		}
		ts := r.p.TableStats()
		if ts.SwapIns == 0 || ts.Evictions == 0 || ps.Drops["hold_full"] == 0 {
			t.Errorf("seed %d: scenario too tame: %+v drops %v", seed, ts, ps.Drops)
		}
		t.Logf("seed %d: hits %d delivered %d drops %v; swap-ins %d evictions %d; %d+%d rules",
			seed, matched, delivered, ps.Drops, ts.SwapIns, ts.Evictions, n, b)
	}
}

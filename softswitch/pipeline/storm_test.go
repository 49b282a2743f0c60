package pipeline

import (
	"runtime"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/openflow"
)

// Must-show (issue 3): a Packet-In storm of 100 000 misses keeps memory
// flat and reports drops. Every miss is a new flow at 100 000 pps against
// pica8-p3297's ~240 Packet-Ins/s; the agent's bounded miss queue takes
// what it can and drops the rest.
func TestPacketInStormKeepsMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("long single-goroutine simulation: the race phase (-short) leaves it to the integration phase")
	}
	const (
		misses  = 100_000
		warmup  = 10_000
		perTick = 100 // misses per event, 1 ms apart: 100 000 pps
	)
	prof := loadProfile(t, "pica8-p3297", nil)
	r := newRig(t, prof, Options{})
	r.ctl.countOnly = true

	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	var atWarmup, atEnd uint64
	sent := 0
	// One event at a time, so the scheduler itself does not hold the storm.
	var tick func()
	tick = func() {
		for range perTick {
			r.sw.Receive(1, frame(t, sent%60000, uint32(sent)))
			sent++
		}
		switch sent {
		case warmup:
			atWarmup = heap()
		case misses:
			atEnd = heap()
			return
		}
		r.sim.AfterFunc(time.Millisecond, tick)
	}
	r.at(0, tick)
	r.run()

	growth := int64(atEnd) - int64(atWarmup)
	t.Logf("heap after %d misses %.1f MiB, after %d %.1f MiB (growth %+.2f MiB)",
		warmup, float64(atWarmup)/(1<<20), misses, float64(atEnd)/(1<<20), float64(growth)/(1<<20))
	if growth > 4<<20 {
		t.Errorf("heap grew by %d bytes over %d further misses", growth, misses-warmup)
	}

	st := r.p.Agent().Stats()
	cfg := prof.Agent
	if st.MaxMissQueue > cfg.MissQueueLimit {
		t.Errorf("miss queue reached %d, limit %d", st.MaxMissQueue, cfg.MissQueueLimit)
	}
	dropped := counterValue(t, r.reg, "pseudocong_agent_drops_total",
		map[string]string{"what": "packet_in", "reason": "miss_queue_full"})
	r.ctl.mu.Lock()
	packetIns := r.ctl.counts[openflow.TypePacketIn]
	r.ctl.mu.Unlock()
	t.Logf("packet-ins sent %d, dropped %g, max miss queue %d", packetIns, dropped, st.MaxMissQueue)
	if dropped < misses/2 {
		t.Errorf("only %g drops reported for %d misses", dropped, misses)
	}
	if uint64(packetIns)+uint64(dropped) != misses {
		t.Errorf("%d sent + %g dropped != %d misses", packetIns, dropped, misses)
	}
	if d := r.sim.Elapsed(); d > 10*time.Second {
		t.Errorf("the backlog took %v to drain: queue not bounded", d)
	}
}

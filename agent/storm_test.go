package agent

import (
	"runtime"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
)

// A Packet-In storm of 100 000 misses keeps every queue within its limit,
// reports the drops, accounts for every miss, and keeps the heap flat.
func TestStormKeepsQueuesBounded(t *testing.T) {
	const (
		total    = 100_000
		interval = time.Microsecond // 1 M misses/s for 100 ms
	)
	cfg := pica8()
	cfg.MissQueueLimit = 1000
	cfg.RateLimit, cfg.BurstLimit = 100, 25
	sim := clock.NewSim(t0)
	a, rec := newTestAgent(t, sim, cfg, nil)
	rec.onBatch = func(b []PacketIn) { rec.batches = rec.batches[:0] } // keep nothing

	// Misses chain themselves so the scheduler itself stays small.
	sent := 0
	data := make([]byte, 128)
	var next func()
	next = func() {
		a.Miss(PacketIn{Data: data, Cookie: sent})
		sent++
		if sent < total {
			sim.AfterFunc(interval, next)
		}
	}
	sim.AfterFunc(0, next)

	heapAt := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	sim.RunUntil(t0.Add(10 * time.Millisecond)) // 10 000 misses in
	early := heapAt()
	sim.RunUntil(t0.Add(100 * time.Millisecond)) // all 100 000 in
	late := heapAt()
	sim.Run()

	s := a.Stats()
	if s.Misses != total {
		t.Fatalf("agent saw %d misses, want %d", s.Misses, total)
	}
	if s.MaxMissQueue > cfg.MissQueueLimit || s.MaxRateLimitQueue > cfg.BurstLimit {
		t.Errorf("queues exceeded limits: miss %d/%d, rate %d/%d", s.MaxMissQueue, cfg.MissQueueLimit,
			s.MaxRateLimitQueue, cfg.BurstLimit)
	}
	if s.PacketInDrops[DropMissQueueFull] < total/2 || s.PacketInDrops[DropRateLimited] == 0 {
		t.Errorf("storm drops not reported: %v", s.PacketInDrops)
	}
	if got := s.Sent + s.DroppedPacketIns(); got != total {
		t.Errorf("sent %d + dropped %d = %d, want every one of %d misses accounted for",
			s.Sent, s.DroppedPacketIns(), got, total)
	}
	growth := int64(late) - int64(early)
	t.Logf("heap after 10k misses %d B, after 100k %d B (growth %d B); stats %+v", early, late, growth, s)
	if growth > 1<<20 {
		t.Errorf("heap grew %d B while 90 000 more misses arrived: memory not flat", growth)
	}
}

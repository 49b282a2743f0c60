package calibrate

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/profile"
)

// synthResult is what a run against a known switch would record: the
// pica8-like TCAM of synthSwitch, Packet-Ins in batches of 25 at 4.2 ms,
// a periodic 120 ms flush timer, a 1 024-miss queue.
func synthResult(t *testing.T) *Result {
	rng := rand.New(rand.NewPCG(11, 12))
	s := synthSwitch{layout: LayoutHighestFirst, capacity: 300, window: 20,
		cWrite: 300 * time.Microsecond, cMove: 14400 * time.Nanosecond, cSlow: 70 * time.Microsecond,
		over: 1500 * time.Microsecond, noise: 500 * time.Microsecond, rng: rng}
	res := &Result{Switch: "tcp:synthetic", Started: time.Unix(0, 0), Fill: map[string]int{}}
	res.Batches = s.batches(t, 299)
	for _, p := range Patterns {
		res.Fill[p] = 299
	}
	p := 4200 * time.Microsecond
	for b := 0; b < 12; b++ {
		for i := 0; i < 25; i++ {
			res.Burst = append(res.Burst, time.Duration(b*25+25)*p+time.Duration(i)*5*time.Microsecond)
		}
	}
	res.BurstSent = 300
	for i := 0; i < 30; i++ {
		res.Isolated = append(res.Isolated, p+time.Duration(rng.Float64()*float64(120*time.Millisecond)))
	}
	res.QueueSent, res.QueueGot, res.QueueSendDur = 2000, 1030, 21*time.Millisecond
	for i := 0; i < 100; i++ {
		res.Hit = append(res.Hit, 50*time.Microsecond+time.Duration(rng.IntN(30))*time.Microsecond)
		res.Echo = append(res.Echo, 200*time.Microsecond)
	}
	for i := 0; i < 20; i++ {
		n := 10 + 40*(i%2)
		res.Deletes = append(res.Deletes, DeleteBatch{N: n, Duration: time.Millisecond + time.Duration(n)*300*time.Microsecond})
	}
	return res
}

func TestWrittenProfileLoadsAndCarriesTheFit(t *testing.T) {
	res := synthResult(t)
	// The synthetic run has no cache probe: give the capacity as a
	// TABLE_FULL would.
	res.TableFull = 300
	f := Analyse(res)
	out, missing, err := WriteProfile(res, f, ProfileOptions{Name: "synthetic"})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(missing) != 0 {
		t.Errorf("missing %v, want none", missing)
	}
	p, err := profile.Parse(out, "test")
	if err != nil {
		t.Fatal(err)
	}
	within(t, "packet_in_cost", p.Agent.PacketInCost, 4200*time.Microsecond, 0.05)
	if p.Agent.BatchSize != 25 {
		t.Errorf("batch %d, want 25", p.Agent.BatchSize)
	}
	within(t, "flush_period", p.Agent.FlushPeriod, 120*time.Millisecond, 0.10)
	if p.Agent.MissQueueLimit != 1024 {
		t.Errorf("miss queue %d, want 1024", p.Agent.MissQueueLimit)
	}
	if p.TCAM.Capacity != 300 || p.TCAM.Layout != "highest-first" || p.TCAM.Timing.SlowMoveFreeSlots < 16 || p.TCAM.Timing.SlowMoveFreeSlots > 24 {
		t.Errorf("tcam %+v, want 300 highest-first, slow window ~20", p.TCAM)
	}
	within(t, "driver_per_write", p.TCAM.Timing.DriverPerWrite, 300*time.Microsecond, 0.10)
	within(t, "driver_per_move", p.TCAM.Timing.DriverPerMove, 14400*time.Nanosecond, 0.10)
	within(t, "driver_per_slow_move", p.TCAM.Timing.DriverPerSlowMove, 70*time.Microsecond, 0.10)
	within(t, "driver_per_invalidate", p.TCAM.Timing.DriverPerInvalidate, 300*time.Microsecond, 0.10)
	if p.Provenance == nil || p.Provenance.Partial {
		t.Errorf("provenance %+v, want a complete profile", p.Provenance)
	}
	if !strings.Contains(string(out), "# c_write = ") {
		t.Error("the fit is not written as a comment")
	}
}

func TestEmptyRunWritesAPartialProfile(t *testing.T) {
	res := &Result{Switch: "tcp:gone", Partial: true, StopReason: "the switch disconnected", Fill: map[string]int{}}
	out, missing, err := WriteProfile(res, Analyse(res), ProfileOptions{})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	p, err := profile.Parse(out, "test")
	if err != nil {
		t.Fatal(err)
	}
	if p.Provenance == nil || !p.Provenance.Partial || len(p.Provenance.Missing) == 0 || len(missing) == 0 {
		t.Errorf("provenance %+v, want partial with missing keys", p.Provenance)
	}
	if !strings.Contains(p.Provenance.Notes, "disconnected") {
		t.Errorf("notes %q do not say why", p.Provenance.Notes)
	}
}

func TestReportWritesPlots(t *testing.T) {
	res := synthResult(t)
	res.TableFull = 300
	f := Analyse(res)
	out, _, err := WriteProfile(res, f, ProfileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteReport(dir, res, f, out); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"report.md", "inserts.png", "packetin_burst.png"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
}

// forwarding.packet_out_delay is written only when the PACKET_OUT path,
// less the channel, is clearly slower than a hit.
func TestPacketOutDelayWrittenOnlyWhenSlower(t *testing.T) {
	us := time.Microsecond
	f := Fits{Echo: DelayStats{N: 20, Median: 80 * us}, Hit: DelayStats{N: 200, Median: 100 * us},
		PacketOut: DelayStats{N: 100, Median: 200 * us}}
	if got := packetOutDelay(f); got != 160*us {
		t.Errorf("slow PACKET_OUT: %v, want 160µs (median minus the channel)", got)
	}
	f.PacketOut.Median = 150 * us // 110 µs: within 20 µs of a hit
	if got := packetOutDelay(f); got != 0 {
		t.Errorf("PACKET_OUT as fast as a hit: %v, want 0", got)
	}
	f.PacketOut.N = 0
	if got := packetOutDelay(f); got != 0 {
		t.Errorf("unmeasured PACKET_OUT: %v, want 0", got)
	}
}

// TestReadBurstsAreNotBatches: Open vSwitch under SCHED_FIFO sends a
// burst's Packet-Ins in regular groups of 32 (its netdev datapath reads 32
// packets per poll) while a lone miss comes back in ~0.3 ms: no batching.
// The same groups with lone misses held 5 ms (a one-shot flush timer)
// stay batches.
func TestReadBurstsAreNotBatches(t *testing.T) {
	for _, c := range []struct {
		name  string
		wait  time.Duration
		batch int
	}{{"read bursts", 300 * time.Microsecond, 1}, {"one-shot timer", 5 * time.Millisecond, 32}} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(21, 22))
			res := synthResult(t)
			res.Burst = res.Burst[:0]
			for g := 0; g < 9; g++ {
				for i := 0; i < 32; i++ {
					res.Burst = append(res.Burst, time.Duration(g)*350*time.Microsecond+time.Duration(i)*500*time.Nanosecond)
				}
			}
			res.BurstSent = len(res.Burst)
			res.Isolated = res.Isolated[:0]
			for i := 0; i < 25; i++ {
				res.Isolated = append(res.Isolated, c.wait+time.Duration(rng.IntN(200))*time.Microsecond)
			}
			f := Analyse(res)
			if f.Burst == nil || f.Burst.BatchSize != c.batch {
				t.Fatalf("burst fit %+v, want batch size %d", f.Burst, c.batch)
			}
			out, _, err := WriteProfile(res, f, ProfileOptions{Name: "synthetic"})
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			p, err := profile.Parse(out, "test")
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if p.Agent.BatchSize != c.batch {
				t.Errorf("profile batch_size %d, want %d", p.Agent.BatchSize, c.batch)
			}
			if c.batch == 1 {
				if f.Burst.ReadBurst != 32 || !strings.Contains(string(out), "read bursts, not batches") {
					t.Errorf("read burst %d, profile comment missing:\n%s", f.Burst.ReadBurst, out)
				}
				// 287 gaps over 8 × 350 µs + 31 × 0.5 µs: the throughput.
				within(t, "p", f.Burst.PacketInCost, (8*350*time.Microsecond+31*500*time.Nanosecond)/287, 0.01)
			}
		})
	}
}

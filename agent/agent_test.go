package agent

import (
	"slices"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
)

// At 5 000 pps the 400 misses of Table 1 arrive in 80 ms, far faster than
// one build per 4.2 ms, so the CPU builds back to back and batch k leaves
// exactly when its 25th Packet-In is built: a staircase of 105 ms steps.
func TestBatchesOf25AtHighRate(t *testing.T) {
	for _, rate := range []int{1000, 5000} {
		sim := clock.NewSim(t0)
		a, rec := newTestAgent(t, sim, pica8(), nil)
		sendMisses(sim, a, 400, time.Second/time.Duration(rate))
		sim.Run()

		if got := rec.sizes(); !slices.Equal(got, slices.Repeat([]int{25}, 16)) {
			t.Fatalf("%d pps: batch sizes %v, want 16 × 25", rate, got)
		}
		for k, b := range rec.batches {
			want := time.Duration(25*(k+1)) * ms(4.2)
			if b.at != want {
				t.Errorf("%d pps: batch %d sent at %v, want %v", rate, k, b.at, want)
			}
			for i, p := range b.pins {
				if p.Cookie.(int) != 25*k+i {
					t.Fatalf("%d pps: batch %d position %d holds miss %v: order lost", rate, k, i, p.Cookie)
				}
			}
		}
		if s := a.Stats(); s.TimerFlushes != 0 || s.Sent != 400 || s.DroppedPacketIns() != 0 {
			t.Errorf("%d pps: stats %+v", rate, s)
		}
		if sim.Pending() != 0 {
			t.Errorf("%d pps: %d events left after the run", rate, sim.Pending())
		}
	}
}

// At 10 pps the CPU keeps up and the periodic timer decides: each Packet-In
// waits for the next tick of the 200 ms grid, so the wait alternates and
// batches hold what was built during one period.
func TestPeriodicFlushAtLowRate(t *testing.T) {
	cfg := pica8()
	period := cfg.FlushPeriod
	for _, rate := range []int{10, 100} {
		sim := clock.NewSim(t0)
		a, rec := newTestAgent(t, sim, cfg, nil)
		interval := time.Second / time.Duration(rate)
		const n = 40
		sendMisses(sim, a, n, interval)
		sim.Run()

		// Independent expectation: built at i·interval + p, sent at the
		// next multiple of the period.
		wantAt := map[int]time.Duration{}
		wantSizes := map[time.Duration]int{}
		for i := range n {
			built := time.Duration(i)*interval + cfg.PacketInCost
			tick := (built/period + 1) * period
			wantAt[i] = tick
			wantSizes[tick]++
		}
		waits := map[time.Duration]bool{}
		for _, b := range rec.batches {
			if len(b.pins) != wantSizes[b.at] {
				t.Errorf("%d pps: batch at %v has %d, want %d", rate, b.at, len(b.pins), wantSizes[b.at])
			}
			for _, p := range b.pins {
				i := p.Cookie.(int)
				if b.at != wantAt[i] {
					t.Errorf("%d pps: miss %d sent at %v, want %v", rate, i, b.at, wantAt[i])
				}
				waits[b.at-p.MissAt.Sub(t0)] = true
			}
		}
		if s := a.Stats(); s.Sent != n || s.TimerFlushes != s.Batches {
			t.Errorf("%d pps: want all %d sent by the timer, stats %+v", rate, n, s)
		}
		if len(waits) < 2 {
			t.Errorf("%d pps: wait is constant %v, want periodic jitter", rate, waits)
		}
	}
}

// The flush timer ticks on a grid from New, it is not started by the first
// queued entry.
func TestFlushTimerIsPeriodicNotOneShot(t *testing.T) {
	sim := clock.NewSim(t0)
	cfg := pica8()
	// A round period of our own (not the calibrated one) for readable
	// times below.
	cfg.FlushPeriod = 200 * time.Millisecond
	a, rec := newTestAgent(t, sim, cfg, nil)
	sim.At(t0.Add(150*time.Millisecond), func() { a.Miss(PacketIn{Cookie: 0}) })
	sim.At(t0.Add(390*time.Millisecond), func() { a.Miss(PacketIn{Cookie: 1}) })
	sim.Run()
	want := []time.Duration{200 * time.Millisecond, 400 * time.Millisecond} // built at 154.2, 394.2
	var got []time.Duration
	for _, b := range rec.batches {
		got = append(got, b.at)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("batches sent at %v, want %v (one-shot timer would give 354.2ms, 594.2ms)", got, want)
	}
}

// A long job (a TCAM shift) holds the CPU: Packet-Ins queued behind it are
// built only when it ends.
func TestLongInstallDelaysPacketInBuilds(t *testing.T) {
	cfg := pica8()
	cfg.BatchSize = 1
	for _, shift := range []time.Duration{0, 64 * time.Millisecond, 500 * time.Millisecond} {
		sim := clock.NewSim(t0)
		a, rec := newTestAgent(t, sim, cfg, nil)
		var doneAt time.Duration
		a.Submit(Job{Kind: "flow_mod", Cost: ms(0.3), Start: func() time.Duration { return shift },
			Done: func() { doneAt = sim.Now().Sub(t0) }})
		sim.At(t0.Add(time.Millisecond), func() { a.Miss(PacketIn{Cookie: 0}) })
		sim.At(t0.Add(2*time.Millisecond), func() { a.Miss(PacketIn{Cookie: 1}) })
		sim.Run()

		install := ms(0.3) + shift
		if doneAt != install {
			t.Errorf("shift %v: job done at %v, want %v", shift, doneAt, install)
		}
		firstStart := max(install, time.Millisecond)
		want := []time.Duration{firstStart + cfg.PacketInCost, firstStart + 2*cfg.PacketInCost}
		if len(rec.batches) != 2 || rec.batches[0].at != want[0] || rec.batches[1].at != want[1] {
			t.Errorf("shift %v: batches %v, want sent at %v", shift, rec.batches, want)
		}
		if s := a.Stats(); s.BusyTime != install+2*cfg.PacketInCost {
			t.Errorf("shift %v: busy %v, want %v", shift, s.BusyTime, install+2*cfg.PacketInCost)
		}
	}
}

// Job.Start runs when the CPU picks the job, after the previous job's Done,
// so a cost that depends on shared state sees that state then.
func TestJobStartSeesStateAtStartTime(t *testing.T) {
	sim := clock.NewSim(t0)
	a, _ := newTestAgent(t, sim, pica8(), nil)
	occupancy := 0
	var log []string
	var startedAt []time.Duration
	for i := range 3 {
		a.Submit(Job{
			Start: func() time.Duration {
				startedAt = append(startedAt, sim.Now().Sub(t0))
				log = append(log, "start")
				return time.Duration(occupancy) * time.Millisecond // one "move" per entry
			},
			Done: func() { occupancy++; log = append(log, "done") },
		})
		_ = i
	}
	sim.Run()
	// Costs 0, 1, 2 ms: starts at 0, 0, 1 ms.
	if want := []time.Duration{0, 0, time.Millisecond}; !slices.Equal(startedAt, want) {
		t.Errorf("starts at %v, want %v", startedAt, want)
	}
	if want := []string{"start", "done", "start", "done", "start", "done"}; !slices.Equal(log, want) {
		t.Errorf("callback order %v, want %v", log, want)
	}
}

// The scheduling policy decides who runs when both queues hold work.
func TestSchedulingPolicy(t *testing.T) {
	for _, tc := range []struct {
		policy       Policy
		wantPinSent  time.Duration // second Packet-In (B = 1)
		wantJobDone  time.Duration
		wantFirstPin time.Duration
	}{
		// CPU builds miss 0 over [0, 4.2); miss 1 arrives at 1 ms, the job
		// at 2 ms.
		{InstallFirst, ms(4.2 + 0.3 + 4.2), ms(4.2 + 0.3), ms(4.2)},
		{FIFO, ms(4.2 + 4.2), ms(4.2 + 4.2 + 0.3), ms(4.2)},
	} {
		cfg := pica8()
		cfg.BatchSize = 1
		cfg.Scheduling = tc.policy
		sim := clock.NewSim(t0)
		a, rec := newTestAgent(t, sim, cfg, nil)
		var jobDone time.Duration
		a.Miss(PacketIn{Cookie: 0})
		sim.At(t0.Add(time.Millisecond), func() { a.Miss(PacketIn{Cookie: 1}) })
		sim.At(t0.Add(2*time.Millisecond), func() {
			a.Submit(Job{Cost: ms(0.3), Done: func() { jobDone = sim.Now().Sub(t0) }})
		})
		sim.Run()
		if len(rec.batches) != 2 || rec.batches[0].at != tc.wantFirstPin || rec.batches[1].at != tc.wantPinSent {
			t.Errorf("%s: batches %v, want at %v and %v", tc.policy, rec.batches, tc.wantFirstPin, tc.wantPinSent)
		}
		if jobDone != tc.wantJobDone {
			t.Errorf("%s: job done at %v, want %v", tc.policy, jobDone, tc.wantJobDone)
		}
	}
}

// The closed loop of Table 1 / Fig. 4: with install_first the delay is a
// staircase (each batch of 25 delivered together, well apart from the
// next); with one FIFO every Flow-Mod waits behind the whole miss backlog
// and all 400 packets come out together at the end.
func TestSchedulingPolicyShapesTable1(t *testing.T) {
	const n = 400
	for _, policy := range []Policy{InstallFirst, FIFO} {
		cfg := pica8()
		cfg.Scheduling = policy
		l, _ := newLoop(t, cfg, ms(1.95), ms(0.3))
		sendMisses(l.sim, l.a, n, time.Second/5000)
		l.sim.Run()
		if len(l.delivered) != n {
			t.Fatalf("%s: %d of %d delivered", policy, len(l.delivered), n)
		}
		first, last := l.delivered[0], l.delivered[0]
		for _, at := range l.delivered {
			first, last = minTime(first, at), maxTime(last, at)
		}
		spread := last.Sub(first)
		// Gaps between consecutive batches' deliveries.
		minStep := time.Duration(1 << 62)
		for k := 0; k+1 < n/25; k++ {
			endK := l.delivered[25*k+24]
			startNext := l.delivered[25*(k+1)]
			minStep = min(minStep, startNext.Sub(endK))
		}
		t.Logf("%s: first delivery %v, last %v, min gap between batches %v",
			policy, first.Sub(t0), last.Sub(t0), minStep)
		switch policy {
		case InstallFirst:
			// Steps of ~105 ms minus the 25 × 1.95 ms controller spread.
			if minStep < 40*time.Millisecond || spread < time.Second {
				t.Errorf("install_first: no staircase (min gap %v, spread %v)", minStep, spread)
			}
		case FIFO:
			if spread > 200*time.Millisecond {
				t.Errorf("fifo: deliveries spread over %v, want all at the end", spread)
			}
		}
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func TestStopCancelsEverything(t *testing.T) {
	cfg := pica8()
	cfg.RateLimit, cfg.BurstLimit = 100, 2
	sim := clock.NewSim(t0)
	a, rec := newTestAgent(t, sim, cfg, nil)
	jobDone := false
	sendMisses(sim, a, 60, time.Millisecond)
	sim.At(t0.Add(10*time.Millisecond), func() {
		a.Submit(Job{Cost: time.Second, Done: func() { jobDone = true }})
		a.Submit(Job{Cost: time.Second, Done: func() { jobDone = true }})
	})
	var before Stats
	sim.At(t0.Add(200*time.Millisecond), func() { before = a.Stats(); a.Stop(); a.Stop() })
	sim.Run()

	if sim.Pending() != 0 {
		t.Errorf("%d timers still pending after Stop", sim.Pending())
	}
	if jobDone {
		t.Error("Done called for a job discarded by Stop")
	}
	s := a.Stats()
	if a.Miss(PacketIn{}) || a.Submit(Job{}) {
		t.Error("Miss/Submit accepted after Stop")
	}
	if after := a.Stats(); after.PacketInDrops[DropStopped] != s.PacketInDrops[DropStopped]+1 ||
		after.JobDrops[DropStopped] != s.JobDrops[DropStopped]+1 {
		t.Errorf("refusals after Stop not counted: %v → %v", s, after)
	}
	accepted := before.Misses - before.PacketInDrops[DropMissQueueFull]
	reported := uint64(len(rec.drops[DropStopped]) + len(rec.drops[DropRateLimited]))
	if s.Sent+reported != accepted {
		t.Errorf("accepted %d Packet-Ins, sent %d + reported dropped %d", accepted, s.Sent, reported)
	}
	if len(rec.drops[DropStopped]) == 0 || s.JobDrops[DropStopped] != 2 {
		t.Errorf("want stopped drops of Packet-Ins and 2 jobs, got %v / %v", s.PacketInDrops, s.JobDrops)
	}
	if s.MissQueue+s.JobQueue+s.RateLimitQueue+s.BatchQueue != 0 || s.CPUBusy {
		t.Errorf("queues not empty after Stop: %+v", s)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	sim := clock.NewSim(t0)
	for name, mutate := range map[string]func(*Config){
		"batch 0":              func(c *Config) { c.BatchSize = 0 },
		"batch without period": func(c *Config) { c.FlushPeriod = 0 },
		"negative cost":        func(c *Config) { c.PacketInCost = -1 },
		"no miss queue":        func(c *Config) { c.MissQueueLimit = 0 },
		"no job queue":         func(c *Config) { c.JobQueueLimit = 0 },
		"negative rate":        func(c *Config) { c.RateLimit = -1 },
		"unknown policy":       func(c *Config) { c.Scheduling = "lifo" },
	} {
		cfg := pica8()
		mutate(&cfg)
		if _, err := New(sim, cfg, OutputFunc(func([]PacketIn) {}), nil); err == nil {
			t.Errorf("%s: New accepted %+v", name, cfg)
		}
	}
	if _, err := New(sim, pica8(), OutputFunc(func([]PacketIn) {}), nil); err != nil {
		t.Errorf("valid config rejected: %v", err)
	}
	if _, err := New(sim, DefaultConfig(), OutputFunc(func([]PacketIn) {}), nil); err != nil {
		t.Errorf("DefaultConfig rejected: %v", err)
	}
}

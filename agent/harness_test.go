package agent

import (
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
)

var t0 = time.Date(2016, 1, 1, 0, 0, 0, 0, time.UTC)

// ms converts fractional milliseconds to a Duration exactly enough for the
// values used in these tests (multiples of 100 ns).
func ms(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }

// sentBatch is one batch as Output saw it.
type sentBatch struct {
	at   time.Duration // since t0
	pins []PacketIn
}

// recorder is an Output that records batches and drops, and can forward
// each batch to a controller model.
type recorder struct {
	clk     clock.Clock
	batches []sentBatch
	drops   map[DropReason][]PacketIn
	onBatch func([]PacketIn)
}

func newRecorder(clk clock.Clock) *recorder {
	return &recorder{clk: clk, drops: map[DropReason][]PacketIn{}}
}

func (r *recorder) SendPacketIns(batch []PacketIn) {
	r.batches = append(r.batches, sentBatch{at: r.clk.Now().Sub(t0), pins: batch})
	if r.onBatch != nil {
		r.onBatch(batch)
	}
}

func (r *recorder) PacketInDropped(p PacketIn, reason DropReason) {
	r.drops[reason] = append(r.drops[reason], p)
}

func (r *recorder) sizes() []int {
	var s []int
	for _, b := range r.batches {
		s = append(s, len(b.pins))
	}
	return s
}

func newTestAgent(t *testing.T, sim *clock.Sim, cfg Config, m *Metrics) (*Agent, *recorder) {
	t.Helper()
	rec := newRecorder(sim)
	a, err := New(sim, cfg, rec, m)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return a, rec
}

// sendMisses schedules n misses, one every interval from t0, each carrying
// its index as Cookie.
func sendMisses(sim *clock.Sim, a *Agent, n int, interval time.Duration) {
	for i := range n {
		sim.At(t0.Add(time.Duration(i)*interval), func() { a.Miss(PacketIn{Cookie: i}) })
	}
}

// pica8 is the agent section of the calibrated profile,
// profile/builtin/pica8-p3297.yaml (docs/calibration.md). A copy: these
// tests are in package agent, which package profile imports, so they
// cannot load it; TestPica8CopyMatchesProfile (profile_test.go, package
// agent_test) fails when the two differ.
func pica8() Config {
	return Config{
		PacketInCost:   ms(4.2),
		BatchSize:      25,
		FlushPeriod:    120 * time.Millisecond,
		MissQueueLimit: 1024,
		JobQueueLimit:  4096,
		RateLimit:      0,
		BurstLimit:     0,
		Scheduling:     InstallFirst,
	}
}

// loop closes the reactive loop of paper 000 Fig. 1 around the agent: a
// controller serving Packet-Ins one at a time (tc each) answers each with a
// Flow-Mod; the agent installs it (a job of cost install); the packet is
// delivered hitDelay after the install is done.
type loop struct {
	sim       *clock.Sim
	a         *Agent
	tc        time.Duration
	install   time.Duration
	hitDelay  time.Duration
	ctrlFree  time.Time
	delivered map[int]time.Time // by cookie
}

func newLoop(t *testing.T, cfg Config, tc, install time.Duration) (*loop, *recorder) {
	sim := clock.NewSim(t0)
	a, rec := newTestAgent(t, sim, cfg, nil)
	l := &loop{sim: sim, a: a, tc: tc, install: install, hitDelay: 50 * time.Microsecond,
		delivered: map[int]time.Time{}}
	rec.onBatch = l.controller
	return l, rec
}

func (l *loop) controller(batch []PacketIn) {
	for _, p := range batch {
		start := l.sim.Now()
		if l.ctrlFree.After(start) {
			start = l.ctrlFree
		}
		l.ctrlFree = start.Add(l.tc)
		id := p.Cookie.(int)
		l.sim.At(l.ctrlFree, func() {
			l.a.Submit(Job{Kind: "flow_mod", Cost: l.install, Done: func() {
				l.delivered[id] = l.sim.Now().Add(l.hitDelay)
			}})
		})
	}
}

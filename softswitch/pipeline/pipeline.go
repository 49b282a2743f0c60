package pipeline

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/pseudocong/pseudocong/agent"
	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/profile"
	"github.com/pseudocong/pseudocong/softswitch"
	"github.com/pseudocong/pseudocong/softswitch/dataplane"
	"github.com/pseudocong/pseudocong/tcam"
)

// Pipeline is the modelled data plane attached to one switch. Create it
// with Attach; it is safe for concurrent use.
type Pipeline struct {
	sw       *softswitch.Switch
	clk      clock.Clock
	prof     *profile.Profile
	opts     Options
	log      *slog.Logger
	agent    *agent.Agent
	metrics  *dataplane.Metrics
	hitDelay time.Duration

	// mu guards everything below. Lock order: the switch's lock (held
	// while the table listener runs) before mu. Never call the switch or
	// the agent with mu held: both may call back into the pipeline.
	mu      sync.Mutex
	stopped bool
	table   *dataplane.Table

	// waits holds, per rule ID, the packets waiting for a CPU job that
	// puts the rule into the TCAM (an install or a swap-in). A rule has a
	// wait list exactly while such a job is in flight.
	waits map[uint64]*waitList
	held  int // packets in all wait lists

	// job accounting: acc collects the TCAM cost of the flow_mod job that
	// is applying its FLOW_MOD now; unbilled collects TCAM work done
	// outside any job (timeouts), charged to the next job.
	acc      *jobAcc
	unbilled time.Duration
	preload  *preloadState

	// BARRIER ordering: flow_mod jobs accepted and done, and the barriers
	// waiting for a count of done jobs.
	accepted, done uint64
	barriers       []pendingBarrier

	// bgQueued: a tcam_background job is queued and has not started.
	bgQueued bool

	// upcall latency (profile upcall): the last miss's arrival, the misses
	// on their way to the CPU (due times nondecreasing) and their timer.
	lastMiss       time.Time
	upcalls        []upcallItem
	upcallTimer    clock.Timer
	upcallDraining bool

	line delayLine
	// outLine delays the packets the controller hands back (a FLOW_MOD's
	// buffered packet) by forwarding.packet_out_delay, when it is set.
	outLine delayLine
	st      Stats
}

// directLine is where the packets a FLOW_MOD's buffer_id releases go: the
// packet-out line when the profile sets forwarding.packet_out_delay, the
// hit-delay line otherwise.
func (p *Pipeline) directLine() *delayLine {
	if p.prof.Forwarding.PacketOutDelay > 0 {
		return &p.outLine
	}
	return &p.line
}

// handsBackDirect reports whether a FLOW_MOD's buffered packet takes its
// own path (waitList.direct): with an activation delay (it does not wait
// for it) or a packet-out delay (it is not a hit).
func (p *Pipeline) handsBackDirect() bool {
	return p.prof.Install.ActivationDelay > 0 || p.prof.Forwarding.PacketOutDelay > 0
}

// Stats are the pipeline's own counters, for tests and experiment reports.
type Stats struct {
	// Delivered counts packets handed to the switch after their delay, by
	// path (dataplane.PathHit, PathSwapIn, PathInstallWait).
	Delivered map[string]uint64
	// Drops counts packets (and BARRIERs) dropped, by reason.
	Drops map[string]uint64
	// FlowModJobs counts FLOW_MODs accepted by the agent; FlowModsRefused
	// those its job queue refused (answered with FLOW_MOD_FAILED/EPERM).
	FlowModJobs, FlowModsRefused uint64
	// SwapInJobs counts swap-ins submitted.
	SwapInJobs uint64
	// TCAMBackgroundJobs counts the TCAM layout's deferred-work jobs run
	// (hermes's migrations; none for the other layouts).
	TCAMBackgroundJobs uint64
	// Held is the number of packets waiting for a rule now; MaxHeld its
	// high-water mark.
	Held, MaxHeld int
	// InFlight is the number of packets in the hit-delay line now.
	InFlight int
}

// Attach builds the agent and the data-plane table from opts.Profile and
// installs the pipeline in sw's three seams and as its table listener. The
// switch should have been built with Config.TableCapacity =
// TableCapacity(profile, opts.BackingCapacity), must have been built with
// Config.TieBreak = TieBreak(profile) (Attach fails otherwise), and should
// hold no flow entries yet: entries added before Attach are not placed and
// forward at the hit delay like software-only rules.
func Attach(sw *softswitch.Switch, opts Options) (*Pipeline, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	p := &Pipeline{
		sw:       sw,
		clk:      sw.Clock(),
		prof:     opts.Profile,
		opts:     opts,
		log:      opts.Logger.With("profile", opts.Profile.Name),
		hitDelay: opts.Profile.Forwarding.HitDelay,
		waits:    make(map[uint64]*waitList),
		st:       Stats{Delivered: map[string]uint64{}, Drops: map[string]uint64{}},
	}
	p.line.init(p, opts.DelayLineLimit, p.hitDelay)
	p.outLine.init(p, opts.DelayLineLimit, opts.Profile.Forwarding.PacketOutDelay)
	layout, err := opts.Profile.TCAMLayout()
	if err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	// The flow table decides which rule a packet uses; between overlapping
	// equal-priority rules it must pick the one the TCAM would.
	if got, want := sw.TieBreak(), layout.TieBreak(); got != want {
		return nil, fmt.Errorf("pipeline: switch breaks priority ties with %v but the %s layout of profile %s with %v (set softswitch.Config.TieBreak)",
			got, layout.Name(), opts.Profile.Name, want)
	}
	ev, err := dataplane.EvictionByName(opts.Eviction)
	if err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	if err := opts.Profile.Agent.Validate(); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	// On any failure below the registry is left as it was. The agent's
	// series come last: agent.New cannot fail once its config is valid,
	// so they never need undoing.
	if p.metrics, err = dataplane.NewMetrics(opts.Registerer); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			p.metrics.Unregister(opts.Registerer)
		}
	}()
	p.table, err = dataplane.New(dataplane.Config{
		TCAMSlots:       opts.Profile.TCAM.Capacity,
		Layout:          layout,
		Timing:          opts.Profile.TCAM.Timing,
		BackingCapacity: opts.BackingCapacity,
		Eviction:        ev,
	}, p.metrics)
	if err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	am, err := agent.NewMetrics(opts.Registerer)
	if err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	if p.agent, err = agent.New(p.clk, opts.Profile.Agent, agentOutput{p}, am); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	ok = true
	sw.SetTableListener(tableListener{p})
	sw.SetMissHandler(p)
	sw.SetInstaller(p)
	sw.SetForwarder(p)
	p.log.Info("modelled data plane attached", "agent", p.agent.String(),
		"tcam", opts.Profile.TCAM.Capacity, "layout", layout.Name(), "backing", opts.BackingCapacity,
		"eviction", ev.Name(), "swap_in_upcall", opts.SwapInUpcall, "hit_delay", p.hitDelay)
	return p, nil
}

// TieBreak is the tie rule of p's TCAM layout, for
// softswitch.Config.TieBreak of a switch the pipeline will model; an
// unknown layout gives the zero value (Attach then reports the layout).
func TieBreak(p *profile.Profile) tcam.TieBreak {
	layout, err := p.TCAMLayout()
	if err != nil {
		return tcam.LowerIDWins
	}
	return layout.TieBreak()
}

// Agent is the local-CPU model (for its Stats).
func (p *Pipeline) Agent() *agent.Agent { return p.agent }

// Profile is the profile the pipeline was built from.
func (p *Pipeline) Profile() *profile.Profile { return p.prof }

// TableStats returns the placement counters (adds, swap-ins, evictions,
// cost totals).
func (p *Pipeline) TableStats() dataplane.Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.table.Stats()
}

// Occupancy returns the rules in the TCAM and in the backing table.
func (p *Pipeline) Occupancy() (inTCAM, inBacking int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.table.Len()
}

// Where says where the flow entry with this ID lives.
func (p *Pipeline) Where(id uint64) dataplane.Location {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.table.Where(id)
}

// Stats returns a snapshot of the pipeline's counters.
func (p *Pipeline) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.st
	s.Delivered = copyCounts(p.st.Delivered)
	s.Drops = copyCounts(p.st.Drops)
	s.Held = p.held
	s.InFlight = p.line.len() + p.outLine.len()
	return s
}

// Stop stops the agent (its queued work is dropped) and drops the held
// and in-flight packets. The switch keeps its seams; stop feeding it first.
func (p *Pipeline) Stop() {
	p.agent.Stop()
	var upcalls []upcallItem
	defer func() { // after the unlock: freeing a buffer calls the switch
		for _, it := range upcalls {
			p.sw.DropPacketIn(it.m.PacketIn)
		}
	}()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	p.stopped = true
	if p.upcallTimer != nil {
		p.upcallTimer.Stop()
		p.upcallTimer = nil
	}
	upcalls, p.upcalls = p.upcalls, nil
	for range upcalls {
		p.dropLocked(dataplane.DropStopped)
	}
	for id, w := range p.waits {
		for range len(w.hits) + len(w.direct) {
			p.dropLocked(dataplane.DropStopped)
		}
		delete(p.waits, id)
	}
	p.held = 0
	p.metrics.SetHeld(0)
	for range p.line.stop() {
		p.dropLocked(dataplane.DropStopped)
	}
	for range p.outLine.stop() {
		p.dropLocked(dataplane.DropStopped)
	}
}

func (p *Pipeline) dropLocked(reason string) {
	p.st.Drops[reason]++
	p.metrics.Drop(reason)
}

func copyCounts(m map[string]uint64) map[string]uint64 {
	c := make(map[string]uint64, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

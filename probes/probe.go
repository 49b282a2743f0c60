package probes

import (
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
)

// DefaultTimeout is how long, with retransmission modelling off, a probe
// waits for its reply before counting it unanswered. It is longer than the
// Berkeley SYN give-up (75 s) so that the "≥ 75 s" bin is populated with
// real RTTs (the paper observed up to 105.51 s), and equal to the top of
// the RTT histogram buckets.
const DefaultTimeout = 200 * time.Second

// DefaultPayloadLen is the payload of a data probe when Config leaves it 0.
const DefaultPayloadLen = 64

// Config parameterises a Probe.
type Config struct {
	// Count is the number of flows (probes), N. Required.
	Count int
	// Rate is the send rate in packets per second, R: probe i leaves at
	// Start + i/R exactly, so N probes take (N−1)/R. Required.
	Rate float64
	// Tuples, if set, are the flows to use (at least Count, distinct);
	// otherwise GenerateTuples(Count, Flows, Seed) provides them.
	Tuples []FiveTuple
	Flows  TupleSpec
	// Seed drives generated tuples and initial sequence numbers.
	Seed uint64
	// Profile is the timer profile for retransmission modelling; the zero
	// value means Berkeley.
	Profile TimerProfile
	// Retransmit models the stack's retransmissions per Profile: resend at
	// each retransmission time, give up at the give-up time. Off by
	// default, as in the paper, whose raw-socket probes sent each packet
	// once and classified the RTT of that first packet.
	Retransmit bool
	// Timeout applies with Retransmit off: how long each probe waits for its
	// reply. 0 means DefaultTimeout.
	Timeout time.Duration
	// PayloadLen is the data probes' payload size; 0 means
	// DefaultPayloadLen. Ignored by SYN probes.
	PayloadLen int
	// Observer, if non-nil, is told every RTT (e.g. Prometheus).
	Observer Observer
	// Logger, if non-nil, receives warnings (send errors).
	Logger *slog.Logger
}

// Stats counts what a Probe saw. Unanswered covers timeouts, give-ups and
// probes whose first send failed.
type Stats struct {
	Sent          int // first transmissions handed to the Sender
	Retransmitted int // modelled retransmissions handed to the Sender
	Answered      int
	Unanswered    int
	Late          int // replies for probes already counted unanswered
	Duplicate     int // further replies for answered probes
	Stray         int // replies matching no probe (tuple, type or ack)
	SendErrors    int
}

type flowState uint8

const (
	flowIdle flowState = iota
	flowWaiting
	flowAnswered
	flowUnanswered
)

type flow struct {
	res     Result
	isn     uint32
	state   flowState
	attempt int
	timer   clock.Timer
}

// Probe is the sans-I/O prober of experiments 3.1 (SYN) and 3.2 (DATA): it
// sends Count packets with distinct 5-tuples at Rate through a Sender and
// records, for each, the RTT until the matching reply is delivered.
//
// All entry points (timer callbacks, Deliver, accessors) lock one mutex, so
// a Probe works on the wall clock where timers fire on their own
// goroutines; on a clock.Sim everything runs in the scheduler loop.
type Probe struct {
	kind   Kind
	clk    clock.Clock
	out    Sender
	obs    Observer
	log    *slog.Logger
	rate   float64
	payld  int
	retx   []time.Duration // cumulative retransmission times (Retransmit on)
	giveUp time.Duration   // give-up (Retransmit on) or Timeout (off)
	model  bool            // Retransmit
	sendFn func()          // p.sendNext, bound once (a method value allocates)

	mu      sync.Mutex
	started bool
	start   time.Time
	next    int
	flows   []flow
	byReply map[FiveTuple]int // reply tuple (request reversed) → flow
	settled int
	stats   Stats
	done    chan struct{}
}

// NewSYNProbe returns a prober that sends SYNs and waits for SYN-ACKs.
func NewSYNProbe(clk clock.Clock, out Sender, cfg Config) (*Probe, error) {
	return newProbe(KindSYN, clk, out, cfg)
}

// NewDataProbe returns a prober that sends one data segment per flow and
// waits for its ACK.
func NewDataProbe(clk clock.Clock, out Sender, cfg Config) (*Probe, error) {
	return newProbe(KindData, clk, out, cfg)
}

func newProbe(kind Kind, clk clock.Clock, out Sender, cfg Config) (*Probe, error) {
	fail := func(format string, a ...any) (*Probe, error) {
		return nil, fmt.Errorf("%s probe: "+format, append([]any{kind}, a...)...)
	}
	switch {
	case clk == nil:
		return fail("nil clock")
	case out == nil:
		return fail("nil sender")
	case cfg.Count <= 0:
		return fail("count %d must be positive", cfg.Count)
	case !(cfg.Rate > 0) || math.IsInf(cfg.Rate, 0):
		return fail("rate %v pps must be positive and finite", cfg.Rate)
	case cfg.Timeout < 0:
		return fail("timeout %v must not be negative", cfg.Timeout)
	case cfg.PayloadLen < 0:
		return fail("payload length %d must not be negative", cfg.PayloadLen)
	}
	prof := cfg.Profile
	if prof.Name == "" && prof.SYN == nil && prof.SYNGiveUp == 0 {
		prof = Berkeley()
	}
	if err := prof.Validate(); err != nil {
		return fail("%w", err)
	}
	tuples := cfg.Tuples
	if tuples == nil {
		var err error
		if tuples, err = GenerateTuples(cfg.Count, cfg.Flows, cfg.Seed); err != nil {
			return fail("%w", err)
		}
	}
	if len(tuples) < cfg.Count {
		return fail("%d tuples for %d probes", len(tuples), cfg.Count)
	}
	p := &Probe{
		kind:    kind,
		clk:     clk,
		out:     out,
		obs:     cfg.Observer,
		log:     cfg.Logger,
		rate:    cfg.Rate,
		model:   cfg.Retransmit,
		flows:   make([]flow, cfg.Count),
		byReply: make(map[FiveTuple]int, cfg.Count),
		done:    make(chan struct{}),
	}
	p.sendFn = p.sendNext
	if kind == KindData {
		p.payld = cfg.PayloadLen
		if p.payld == 0 {
			p.payld = DefaultPayloadLen
		}
	}
	if p.model {
		p.retx = prof.Retransmits(kind)
		p.giveUp = prof.GiveUp(kind)
	} else {
		p.giveUp = cfg.Timeout
		if p.giveUp == 0 {
			p.giveUp = DefaultTimeout
		}
	}
	isnBase := splitmix64(cfg.Seed ^ 0x5bd1e995)
	for i := range p.flows {
		t := tuples[i]
		if prev, dup := p.byReply[t.Reverse()]; dup {
			return fail("tuples %d and %d are both %v; replies could not be told apart", prev, i, t)
		}
		p.byReply[t.Reverse()] = i
		p.flows[i] = flow{
			res: Result{Index: i, Tuple: t},
			isn: uint32(splitmix64(isnBase + uint64(i))),
		}
	}
	return p, nil
}

// Kind reports whether this probe measures SYNs or data.
func (p *Probe) Kind() Kind { return p.kind }

// Start schedules the first send at the clock's current time.
func (p *Probe) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started {
		return fmt.Errorf("%s probe: already started", p.kind)
	}
	p.started = true
	p.start = p.clk.Now()
	p.clk.AfterFunc(0, p.sendFn)
	return nil
}

// offset is when probe i leaves relative to Start, computed from i (not
// accumulated) so that rounding never drifts.
func (p *Probe) offset(i int) time.Duration {
	return time.Duration(math.Round(float64(i) * float64(time.Second) / p.rate))
}

func (p *Probe) packet(i, attempt int, now time.Time) ProbePacket {
	f := &p.flows[i]
	return ProbePacket{
		Type:       p.kind.request(),
		Tuple:      f.res.Tuple,
		Index:      i,
		Attempt:    attempt,
		Seq:        f.isn,
		PayloadLen: p.payld,
		SentAt:     now,
	}
}

func (p *Probe) sendNext() {
	p.mu.Lock()
	i := p.next
	p.next++
	now := p.clk.Now()
	f := &p.flows[i]
	f.res.Sent = now
	f.state = flowWaiting
	p.stats.Sent++
	pkt := p.packet(i, 0, now)
	p.armLocked(i)
	if p.next < len(p.flows) {
		p.clk.AfterFunc(p.start.Add(p.offset(p.next)).Sub(now), p.sendFn)
	}
	p.mu.Unlock()

	if err := p.out.Send(pkt); err != nil {
		p.sendFailed(i, 0, err)
	}
}

// armLocked sets flow i's next timer, anchored at its first send time so
// that retransmission times are exact (cumulative, not accumulated).
func (p *Probe) armLocked(i int) {
	f := &p.flows[i]
	at, fire := p.giveUp, func() { p.expire(i) }
	if p.model && f.attempt < len(p.retx) {
		next := f.attempt + 1
		at, fire = p.retx[f.attempt], func() { p.retransmit(i, next) }
	}
	f.timer = p.clk.AfterFunc(f.res.Sent.Add(at).Sub(p.clk.Now()), fire)
}

func (p *Probe) retransmit(i, attempt int) {
	p.mu.Lock()
	f := &p.flows[i]
	if f.state != flowWaiting {
		p.mu.Unlock()
		return
	}
	f.attempt = attempt
	p.stats.Retransmitted++
	pkt := p.packet(i, attempt, p.clk.Now())
	p.armLocked(i)
	p.mu.Unlock()

	if err := p.out.Send(pkt); err != nil {
		p.sendFailed(i, attempt, err)
	}
}

func (p *Probe) sendFailed(i, attempt int, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats.SendErrors++
	if p.stats.SendErrors == 1 && p.log != nil {
		p.log.Warn("probe send failed (further failures only counted)",
			"kind", p.kind.String(), "index", i, "attempt", attempt, "err", err)
	}
	// Without retransmission modelling nothing can answer a packet that
	// never left; with it, a later retransmission still may.
	f := &p.flows[i]
	if !p.model && f.state == flowWaiting {
		f.timer.Stop()
		p.unansweredLocked(f)
	}
}

func (p *Probe) expire(i int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f := &p.flows[i]; f.state == flowWaiting {
		p.unansweredLocked(f)
	}
}

func (p *Probe) unansweredLocked(f *flow) {
	f.state = flowUnanswered
	p.stats.Unanswered++
	p.settleLocked()
}

func (p *Probe) settleLocked() {
	p.settled++
	if p.settled == len(p.flows) {
		close(p.done)
	}
}

// Deliver hands the probe a packet from the network. A reply matches a
// flow when its tuple is the flow's reversed, its type is SYN-ACK (SYN
// probe) or ACK (data probe) and it acknowledges the flow's sequence space.
func (p *Probe) Deliver(reply ProbePacket) {
	p.mu.Lock()
	defer p.mu.Unlock()
	i, ok := p.byReply[reply.Tuple]
	if !ok || reply.Type != p.kind.reply() {
		p.stats.Stray++
		return
	}
	f := &p.flows[i]
	if reply.Ack != f.isn+seqSpace(p.packet(i, 0, time.Time{})) {
		p.stats.Stray++
		return
	}
	switch f.state {
	case flowIdle:
		p.stats.Stray++ // acknowledges something not sent yet
	case flowAnswered:
		p.stats.Duplicate++
	case flowUnanswered:
		p.stats.Late++
	case flowWaiting:
		now := p.clk.Now()
		f.timer.Stop()
		f.state = flowAnswered
		f.res.Received = now
		f.res.RTT = now.Sub(f.res.Sent)
		f.res.Answered = true
		f.res.Retransmits = f.attempt
		p.stats.Answered++
		if p.obs != nil {
			p.obs.ObserveRTT(p.kind, f.res.RTT)
		}
		p.settleLocked()
	}
}

// Done is closed once every probe is answered or counted unanswered.
func (p *Probe) Done() <-chan struct{} { return p.done }

// Results returns one Result per flow, in index order (a copy).
func (p *Probe) Results() []Result {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Result, len(p.flows))
	for i := range p.flows {
		out[i] = p.flows[i].res
	}
	return out
}

// Summary summarises Results().
func (p *Probe) Summary() Summary { return Summarize(p.Results()) }

// Stats returns the counters so far.
func (p *Probe) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

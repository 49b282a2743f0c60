package calibrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	"github.com/pseudocong/pseudocong/openflow"
)

// Config is one calibration run.
type Config struct {
	// Switch is the switch's passive OpenFlow target (tcp:HOST:PORT);
	// Listen, instead, waits for the switch to connect (ptcp:PORT[:IP]).
	Switch, Listen string
	// DataIn, DataOut are the host interfaces cabled to two switch ports;
	// probes go in on DataIn and are expected out on DataOut.
	DataIn, DataOut string
	// MaxRules bounds the probe rules per priority pattern.
	MaxRules int
	// Budget bounds the whole run, clean-up included.
	Budget time.Duration
	// BatchSizes are the FLOW_MODs per timed batch, used in turn: two
	// sizes separate the per-insert cost from the per-batch overhead.
	BatchSizes []int
	Patterns   []string
	// Packet-In path: isolated misses (spaced IsolatedSpacing × U[0.5,1.5]),
	// one burst of BurstMisses, one overflowing burst of QueueBurst.
	IsolatedMisses  int
	IsolatedSpacing time.Duration
	// PacedMisses misses are sent at each spacing of PacedGaps (after the
	// isolated ones): the miss → PACKET_IN delay against the time since
	// the previous miss (profile key upcall; Open vSwitch's thread is
	// slower to answer after a long sleep). 0 or no gaps: not measured.
	PacedMisses int
	PacedGaps   []time.Duration
	BurstMisses int
	QueueBurst  int
	// HitProbes and PacketOuts: samples of the hit delay and of the
	// PACKET_OUT path.
	HitProbes, PacketOuts int
	// ProbeInterval spaces the probes that wait for a new rule;
	// ConfirmTimeout is the longest a rule may take to forward.
	ProbeInterval, ConfirmTimeout time.Duration
	Seed                          uint64
	Log                           *slog.Logger
	// Progress receives one line per step (nil: none).
	Progress io.Writer
}

// Defaults fills zero fields.
func (c *Config) Defaults() {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.MaxRules, 4096)
	def(&c.IsolatedMisses, 25)
	def(&c.PacedMisses, 15)
	if c.PacedGaps == nil {
		c.PacedGaps = append([]time.Duration(nil), DefaultPacedGaps...)
	}
	def(&c.BurstMisses, 300)
	def(&c.QueueBurst, 2000)
	def(&c.HitProbes, 200)
	def(&c.PacketOuts, 100)
	if c.Budget == 0 {
		c.Budget = 30 * time.Minute
	}
	if len(c.BatchSizes) == 0 {
		c.BatchSizes = []int{5, 20}
	}
	if len(c.Patterns) == 0 {
		c.Patterns = append([]string(nil), Patterns...)
	}
	if c.IsolatedSpacing == 0 {
		c.IsolatedSpacing = 250 * time.Millisecond
	}
	if c.ProbeInterval == 0 {
		c.ProbeInterval = 200 * time.Microsecond
	}
	if c.ConfirmTimeout == 0 {
		c.ConfirmTimeout = 5 * time.Second
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
}

// DefaultPacedGaps are the spacings of the paced misses: the gaps of
// new flows at 5 000 down to 10 per second (paper 000's Table 1 rates).
var DefaultPacedGaps = []time.Duration{200 * time.Microsecond, 500 * time.Microsecond, time.Millisecond,
	2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond,
	50 * time.Millisecond, 100 * time.Millisecond}

// Validate reports unusable settings.
func (c *Config) Validate() error {
	var errs []error
	if (c.Switch == "") == (c.Listen == "") {
		errs = append(errs, errors.New("give exactly one of --switch and --listen"))
	}
	if c.DataIn == "" || c.DataOut == "" || c.DataIn == c.DataOut {
		errs = append(errs, errors.New("--data needs two different interfaces IF_IN,IF_OUT"))
	}
	if c.MaxRules < 10 || c.MaxRules > 60000 {
		errs = append(errs, fmt.Errorf("--max-rules %d: want 10..60000 (probe addresses are one /16)", c.MaxRules))
	}
	if c.Budget < 10*time.Second {
		errs = append(errs, fmt.Errorf("--budget %v: want at least 10s", c.Budget))
	}
	for _, b := range c.BatchSizes {
		if b < 1 || b > 1000 {
			errs = append(errs, fmt.Errorf("batch size %d: want 1..1000", b))
		}
	}
	for _, p := range c.Patterns {
		if err := ValidPattern(p); err != nil {
			errs = append(errs, err)
		}
	}
	for _, g := range c.PacedGaps {
		if g <= 0 || g > 10*time.Second {
			errs = append(errs, fmt.Errorf("paced gap %v: want (0, 10s]", g))
		}
	}
	if c.PacedMisses < 0 || c.PacedMisses*len(c.PacedGaps) > 10000 {
		errs = append(errs, fmt.Errorf("--paced-misses %d: want 0..%d", c.PacedMisses, 10000/max(len(c.PacedGaps), 1)))
	}
	if c.QueueBurst > 60000 || c.BurstMisses > 60000 {
		errs = append(errs, errors.New("miss bursts must stay below 60000 (one /16 of sources)"))
	}
	return errors.Join(errs...)
}

// Result is everything a run measured, raw, plus how it ended.
type Result struct {
	Switch, Desc    string
	DPID            uint64
	Started         time.Time
	Elapsed         time.Duration
	InPort, OutPort uint16
	TableMax        int // TABLE stats max_entries (0: not said)
	Foreign         int // rules the switch held before the run

	Echo []time.Duration

	Isolated     []time.Duration // miss sent → PACKET_IN
	IsolatedAt   []time.Duration // their PACKET_IN arrivals, from the run's start
	IsolatedLost int
	// IsolatedGap is, per isolated miss, the time since the previous
	// miss was sent (-1: the run's first).
	IsolatedGap []time.Duration
	// Paced are the paced misses (Config.PacedGaps); PacedLost those
	// without a PACKET_IN.
	Paced        []PacedMiss
	PacedLost    int
	Burst        []time.Duration // PACKET_IN arrivals from the burst's first send
	BurstSent    int
	QueueSent    int
	QueueGot     int
	QueueSendDur time.Duration

	Hit       []time.Duration
	PacketOut []time.Duration
	// ProbeInterval is the spacing of the confirmation probes (a batch's
	// confirmation is late by half of it on average).
	ProbeInterval time.Duration

	Batches []Batch
	Deletes []DeleteBatch
	// Cache holds the first-probe delay of every ascending rule after the
	// fill, newest first; CacheRules how many rules were in the table.
	Cache      []time.Duration
	CacheRules int
	// TableFull is the table occupancy at which the switch answered
	// ALL_TABLES_FULL (0: never).
	TableFull int
	// Fill is how many probe rules each pattern reached.
	Fill map[string]int

	// Partial is set when the run stopped early; StopReason says why.
	Partial    bool
	StopReason string
	Cleanup    CleanupReport
}

// CleanupReport says whether the switch's table was restored.
type CleanupReport struct {
	Deleted  int
	Verified bool
	// Leftover lists calibrate's rules still installed (should be none)
	// and Changed the switch's own rules that differ from the snapshot.
	Leftover, Changed int
	Err               string
}

// Cookies mark calibrate's rules: a leftover of an earlier, killed run is
// recognised and removed first.
const (
	cookieBase  uint64 = 0xca1b_0000_0000_0000
	cookieMask  uint64 = 0xffff_0000_0000_0000
	cookieGuard        = cookieBase | 0xffff_ffff
	hitRuleID          = 0xfffe
)

type rule struct {
	id   int
	prio uint16
}

type runner struct {
	cfg      Config
	res      *Result
	of       *ofClient
	in, out  *dataPort
	start    time.Time
	pin      chan rxEvent // PACKET_INs of probe frames
	seq      uint64
	mu       sync.Mutex
	tab      PriorityTable
	live     map[int]rule // probe rules installed now
	guardOn  bool
	snapshot []openflow.FlowStats
	// lastPerRule is the last batch's duration per rule (0 before any).
	lastPerRule time.Duration
}

var errTableFull = errors.New("switch answered ALL_TABLES_FULL")

func (r *runner) progress(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.cfg.Log.Info(msg)
	if r.cfg.Progress != nil {
		fmt.Fprintf(r.cfg.Progress, "[%6.1fs] %s\n", time.Since(r.start).Seconds(), msg)
	}
}

// Run calibrates one switch. It returns the raw result even when the run
// stops early (Partial set, StopReason saying why); the error is non-nil
// only when nothing could be measured at all (no connection, no data
// ports). The switch's table is restored in every case it can reach.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	start := time.Now()
	res := &Result{Started: start, Fill: map[string]int{}, ProbeInterval: cfg.ProbeInterval}
	// The measurement stops early enough to leave time for clean-up.
	reserve := max(5*time.Second, cfg.Budget/10)
	mctx, cancel := context.WithDeadline(ctx, start.Add(cfg.Budget-reserve))
	defer cancel()
	r := &runner{cfg: cfg, res: res, start: start, pin: make(chan rxEvent, 65536), live: map[int]rule{}}

	target := cfg.Switch
	if target == "" {
		target = cfg.Listen
	}
	res.Switch = target
	r.progress("connecting (%s)", target)
	of, err := connectSwitch(mctx, cfg.Switch, cfg.Listen, cfg.Log)
	if err != nil {
		return nil, err
	}
	r.of = of
	defer of.close()
	of.onPacketIn = func(at time.Time, inPort uint16, data []byte) {
		h, ok := decodeProbe(data)
		if !ok {
			return
		}
		h.src = h.src&0xffff | uint32(inPort)<<16 // keep in_port for discovery
		select {
		case r.pin <- rxEvent{hdr: h, at: at}:
		default:
		}
	}
	of.start()
	if r.in, err = openDataPort(cfg.DataIn, cfg.Log); err != nil {
		return nil, err
	}
	defer r.in.close()
	if r.out, err = openDataPort(cfg.DataOut, cfg.Log); err != nil {
		return nil, err
	}
	defer r.out.close()

	stopErr := r.measure(mctx)
	if stopErr != nil {
		res.Partial = true
		res.StopReason = explain(stopErr, of)
		r.progress("STOPPED EARLY: %s", res.StopReason)
	}
	cctx, ccancel := context.WithTimeout(context.Background(), max(reserve, 10*time.Second))
	defer ccancel()
	r.cleanup(cctx)
	res.Elapsed = time.Since(start)
	return res, nil
}

// explain turns a stop into a sentence for the user.
func explain(err error, of *ofClient) string {
	select {
	case <-of.done():
		return fmt.Sprintf("the switch disconnected (%v) during: %v", of.err(), err)
	default:
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("the budget ran out during: %v", err)
	}
	if errors.Is(err, context.Canceled) {
		return fmt.Sprintf("interrupted during: %v", err)
	}
	return err.Error()
}

func (r *runner) measure(ctx context.Context) error {
	res := r.res
	feat, err := r.of.features(ctx)
	if err != nil {
		return err
	}
	res.DPID = feat.DatapathID
	res.Desc = r.of.desc(ctx)
	res.TableMax = r.of.tableMax(ctx)
	r.progress("switch %016x %q, %d ports, table max_entries %d", feat.DatapathID, res.Desc, len(feat.Ports), res.TableMax)
	if err := r.takeSnapshot(ctx); err != nil {
		return err
	}
	for i := 0; i < 20; i++ {
		d, err := r.of.echo(ctx)
		if err != nil {
			return fmt.Errorf("echo: %w", err)
		}
		res.Echo = append(res.Echo, d)
	}
	if err := r.discoverPorts(ctx); err != nil {
		return err
	}
	steps := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"Packet-In path", r.measurePacketIn},
		{"hit delay and PACKET_OUT", r.measureHit},
		{"inserts", r.measureInserts},
	}
	for _, s := range steps {
		if err := s.fn(ctx); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	return nil
}

// takeSnapshot reads the table before anything is added. Rules with
// calibrate's cookie are leftovers of a killed run: they are deleted now.
func (r *runner) takeSnapshot(ctx context.Context) error {
	fl, err := r.of.flows(ctx)
	if err != nil {
		return fmt.Errorf("reading the flow table first: %w", err)
	}
	var mine []openflow.FlowStats
	for _, f := range fl {
		if f.Cookie&cookieMask == cookieBase {
			mine = append(mine, f)
			continue
		}
		r.snapshot = append(r.snapshot, f)
		r.tab.Add(f.Priority)
	}
	r.res.Foreign = len(r.snapshot)
	if len(mine) > 0 {
		r.progress("removing %d rules an earlier calibrate run left behind", len(mine))
		for _, f := range mine {
			if _, err := r.of.send(ctx, deleteStrict(f.Match, f.Priority)); err != nil {
				return err
			}
		}
		if err := r.of.barrier(ctx); err != nil {
			return err
		}
	}
	r.progress("flow table snapshot: %d rules of the switch's own (kept as found)", len(r.snapshot))
	return nil
}

func deleteStrict(m openflow.Match, prio uint16) *openflow.FlowMod {
	return &openflow.FlowMod{Header: openflow.Header{Version: openflow.Version},
		Match: m, Command: openflow.FlowModDeleteStrict, Priority: prio,
		BufferID: openflow.NoBuffer, OutPort: openflow.PortNone}
}

func (r *runner) probeMatch(id int) openflow.Match {
	return openflow.Match{
		Wildcards: openflow.WildcardAll &^ (openflow.WildcardInPort | openflow.WildcardDlType | openflow.WildcardNwSrcMask),
		InPort:    r.res.InPort, DlType: 0x0800, NwSrc: probeIP(id),
	}
}

func (r *runner) guardMatch() openflow.Match {
	m := r.probeMatch(0)
	m.Wildcards |= 16 << openflow.WildcardNwSrcShift
	return m
}

func (r *runner) addFlow(id int, prio uint16) *openflow.FlowMod {
	return &openflow.FlowMod{Header: openflow.Header{Version: openflow.Version},
		Match: r.probeMatch(id), Cookie: cookieBase | uint64(id), Command: openflow.FlowModAdd,
		Priority: prio, BufferID: openflow.NoBuffer, OutPort: openflow.PortNone,
		Actions: []openflow.Action{openflow.ActionOutput{Port: r.res.OutPort}}}
}

func (r *runner) nextSeq() uint64 { r.seq++; return r.seq }

// discoverPorts finds the switch port numbers of the two interfaces from
// the in_port of the PACKET_IN a frame sent on each produces.
func (r *runner) discoverPorts(ctx context.Context) error {
	find := func(p *dataPort, k int) (uint16, error) {
		for try := 0; try < 3; try++ {
			seq := r.nextSeq()
			if _, err := p.send(missIP(0xff00+k), kindDiscover, seq); err != nil {
				return 0, err
			}
			deadline := time.NewTimer(time.Second)
			for waiting := true; waiting; {
				select {
				case e := <-r.pin:
					if e.hdr.kind == kindDiscover && e.hdr.seq == seq {
						deadline.Stop()
						return uint16(e.hdr.src >> 16), nil
					}
				case <-deadline.C:
					waiting = false
				case <-ctx.Done():
					return 0, ctx.Err()
				}
			}
		}
		return 0, fmt.Errorf("no PACKET_IN for frames sent on %s: is it cabled to a switch port, and does none of the switch's rules catch 10.79.0.0/16?", p.name)
	}
	var err error
	if r.res.InPort, err = find(r.in, 1); err != nil {
		return err
	}
	if r.res.OutPort, err = find(r.out, 2); err != nil {
		return err
	}
	if r.res.InPort == r.res.OutPort {
		return fmt.Errorf("%s and %s both reach switch port %d", r.in.name, r.out.name, r.res.InPort)
	}
	r.progress("data ports: %s is switch port %d, %s is port %d", r.in.name, r.res.InPort, r.out.name, r.res.OutPort)
	return nil
}

// collectPacketIns gathers PACKET_INs of kindMiss until none came for
// quiet (or ctx ends), keyed by seq.
func (r *runner) collectPacketIns(ctx context.Context, want int, quiet time.Duration, got map[uint64]time.Time) {
	t := time.NewTimer(quiet)
	defer t.Stop()
	for len(got) < want {
		select {
		case e := <-r.pin:
			if e.hdr.kind == kindMiss {
				got[e.hdr.seq] = e.at
				if !t.Stop() {
					<-t.C
				}
				t.Reset(quiet)
			}
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

func (r *runner) measurePacketIn(ctx context.Context) error {
	res, cfg := r.res, r.cfg
	rng := rand.New(rand.NewPCG(cfg.Seed, 7))
	// Isolated misses: each alone in the switch, at a random phase of any
	// periodic timer.
	r.progress("Packet-In: %d isolated misses, ~%v apart", cfg.IsolatedMisses, cfg.IsolatedSpacing)
	k := 0
	var prev time.Time
	for i := 0; i < cfg.IsolatedMisses; i++ {
		seq := r.nextSeq()
		sent, err := r.in.send(missIP(k), kindMiss, seq)
		k++
		if err != nil {
			return err
		}
		sinceLast := time.Duration(-1)
		if !prev.IsZero() {
			sinceLast = sent.Sub(prev)
		}
		prev = sent
		got := map[uint64]time.Time{}
		gap := time.Duration(float64(cfg.IsolatedSpacing) * (0.5 + rng.Float64()))
		r.collectPacketIns(ctx, 1, 2*time.Second, got)
		if at, ok := got[seq]; ok {
			res.Isolated = append(res.Isolated, at.Sub(sent))
			res.IsolatedAt = append(res.IsolatedAt, at.Sub(r.start))
			res.IsolatedGap = append(res.IsolatedGap, sinceLast)
		} else {
			res.IsolatedLost++
		}
		if err := sleepCtx(ctx, gap); err != nil {
			return err
		}
	}
	if len(res.Isolated) == 0 {
		return errors.New("no PACKET_IN for any isolated miss")
	}
	if err := r.measurePaced(ctx, &k, prev); err != nil {
		return err
	}
	// An overflowing burst: queue limit and drops.
	r.progress("Packet-In: overflow burst of %d misses", cfg.QueueBurst)
	got := map[uint64]time.Time{}
	first := r.seq + 1
	t0 := time.Now()
	for i := 0; i < cfg.QueueBurst; i++ {
		if _, err := r.in.send(missIP(k%60000), kindMiss, r.nextSeq()); err != nil {
			return err
		}
		k++
	}
	res.QueueSendDur = time.Since(t0)
	res.QueueSent = cfg.QueueBurst
	r.collectPacketIns(ctx, cfg.QueueBurst, 2*time.Second, got)
	for s := range got {
		if s >= first {
			res.QueueGot++
		}
	}
	r.progress("Packet-In: %d of %d overflow misses came back (%d dropped)", res.QueueGot, res.QueueSent, res.QueueSent-res.QueueGot)
	if err := ctx.Err(); err != nil {
		return err
	}
	// The rate burst must fit in the queue, or drops thin it out.
	burstN := cfg.BurstMisses
	if res.QueueGot < res.QueueSent {
		burstN = max(min(burstN, res.QueueGot-1), 8)
	}
	// One burst: rate ceiling and batching.
	r.progress("Packet-In: burst of %d misses", burstN)
	got = map[uint64]time.Time{}
	first = r.seq + 1
	for i := 0; i < burstN; i++ {
		at, err := r.in.send(missIP(k), kindMiss, r.nextSeq())
		k++
		if err != nil {
			return err
		}
		if i == 0 {
			t0 = at
		}
	}
	res.BurstSent = burstN
	r.collectPacketIns(ctx, burstN, 2*time.Second, got)
	for s, at := range got {
		if s >= first {
			res.Burst = append(res.Burst, at.Sub(t0))
		}
	}
	sort.Slice(res.Burst, func(i, j int) bool { return res.Burst[i] < res.Burst[j] })
	r.progress("Packet-In: %d of %d burst misses came back", len(res.Burst), burstN)
	return ctx.Err()
}

// PacedMiss is one paced miss: the spacing it was sent at (Level), the
// time since the previous miss was sent (Gap) and miss sent → PACKET_IN
// (Delay).
type PacedMiss struct {
	Level, Gap, Delay time.Duration
}

// measurePaced sends cfg.PacedMisses misses at each spacing of
// cfg.PacedGaps, reading PACKET_INs between the sends, and records each
// one's delay against the time since the previous miss. k numbers the
// miss sources; prev is when the last miss was sent.
func (r *runner) measurePaced(ctx context.Context, k *int, prev time.Time) error {
	res, cfg := r.res, r.cfg
	if cfg.PacedMisses == 0 || len(cfg.PacedGaps) == 0 {
		return nil
	}
	r.progress("Packet-In: %d misses at each of %d spacings, %v to %v", cfg.PacedMisses, len(cfg.PacedGaps),
		cfg.PacedGaps[0], cfg.PacedGaps[len(cfg.PacedGaps)-1])
	type sent struct {
		at         time.Time
		level, gap time.Duration
	}
	sends := map[uint64]sent{}
	var order []uint64
	got := map[uint64]time.Time{}
	for _, g := range cfg.PacedGaps {
		next := time.Now().Add(g)
		for range cfg.PacedMisses {
			r.collectUntil(ctx, next, got)
			if err := ctx.Err(); err != nil {
				return err
			}
			seq := r.nextSeq()
			at, err := r.in.send(missIP(*k%60000), kindMiss, seq)
			*k++
			if err != nil {
				return err
			}
			sends[seq] = sent{at: at, level: g, gap: at.Sub(prev)}
			order = append(order, seq)
			prev, next = at, at.Add(g)
		}
	}
	r.collectPacketIns(ctx, len(sends), 500*time.Millisecond, got)
	for _, seq := range order {
		s := sends[seq]
		if at, ok := got[seq]; ok {
			res.Paced = append(res.Paced, PacedMiss{Level: s.level, Gap: s.gap, Delay: at.Sub(s.at)})
		} else {
			res.PacedLost++
		}
	}
	return ctx.Err()
}

// collectUntil records miss PACKET_INs into got until deadline. It
// sleeps, never spins: on a loaded 2-core host a spinning sender took a
// core from the switch under test (its misses 200 µs apart waited 3-7 ms
// instead of 0.1-0.5), so a spacing shorter than the host's timer
// lateness comes out longer; the fit uses each miss's real gap.
func (r *runner) collectUntil(ctx context.Context, deadline time.Time, got map[uint64]time.Time) {
	if d := time.Until(deadline); d > 0 {
		r.collectFor(ctx, d, got)
	}
}

// collectFor records miss PACKET_INs into got for d.
func (r *runner) collectFor(ctx context.Context, d time.Duration, got map[uint64]time.Time) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case e := <-r.pin:
			if e.hdr.kind == kindMiss {
				got[e.hdr.seq] = e.at
			}
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// installGuard adds the lowest-priority rule that drops every probe
// source: probes sent before their rule is active must not become
// PACKET_INs, which would load the switch's CPU during the measurement.
func (r *runner) installGuard(ctx context.Context) error {
	if r.guardOn {
		return nil
	}
	fm := &openflow.FlowMod{Header: openflow.Header{Version: openflow.Version},
		Match: r.guardMatch(), Cookie: cookieGuard, Command: openflow.FlowModAdd,
		Priority: 0, BufferID: openflow.NoBuffer, OutPort: openflow.PortNone}
	xid, err := r.of.send(ctx, fm)
	if err != nil {
		return err
	}
	if err := r.of.barrier(ctx); err != nil {
		return err
	}
	if e := r.of.errorFor(xid); e != nil {
		return fmt.Errorf("switch refused the guard rule: %v", e)
	}
	r.mu.Lock()
	r.guardOn = true
	r.tab.Add(0)
	r.mu.Unlock()
	return nil
}

func (r *runner) removeGuard(ctx context.Context) error {
	if !r.guardOn {
		return nil
	}
	if _, err := r.of.send(ctx, deleteStrict(r.guardMatch(), 0)); err != nil {
		return err
	}
	if err := r.of.barrier(ctx); err != nil {
		return err
	}
	r.mu.Lock()
	r.guardOn = false
	r.tab.Remove(0)
	r.mu.Unlock()
	return nil
}

// waitForward sends probes for rule id every ProbeInterval until one
// comes out, and returns the first forwarded probe's send and arrival.
// abort is polled between probes (a FLOW_MOD error ends the wait).
func (r *runner) waitForward(ctx context.Context, id int, interval, timeout time.Duration, abort func() error) (sent, at time.Time, err error) {
	sends := map[uint64]time.Time{}
	deadline := time.Now().Add(timeout)
	var firstSeq uint64
	tick := time.NewTimer(0)
	defer tick.Stop()
	<-tick.C
	for {
		seq := r.nextSeq()
		if firstSeq == 0 {
			firstSeq = seq
		}
		t, err := r.in.send(probeIP(id), kindRule, seq)
		if err != nil {
			return t, t, err
		}
		sends[seq] = t
		tick.Reset(interval)
		for waiting := true; waiting; {
			select {
			case e := <-r.out.rx:
				if e.hdr.kind == kindRule && e.hdr.src == probeIP(id) && e.hdr.seq >= firstSeq {
					return sends[e.hdr.seq], e.at, nil
				}
			case <-tick.C:
				waiting = false
			case <-ctx.Done():
				return t, t, ctx.Err()
			case <-r.of.done():
				return t, t, fmt.Errorf("connection lost: %v", r.of.err())
			}
		}
		if abort != nil {
			if err := abort(); err != nil {
				return t, t, err
			}
		}
		if time.Now().After(deadline) {
			return t, t, fmt.Errorf("rule for %s not forwarding after %v", ipString(probeIP(id)), timeout)
		}
	}
}

func (r *runner) measureHit(ctx context.Context) error {
	res, cfg := r.res, r.cfg
	if err := r.installGuard(ctx); err != nil {
		return err
	}
	xid, err := r.of.send(ctx, r.addFlow(hitRuleID, 40000))
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.live[hitRuleID] = rule{id: hitRuleID, prio: 40000}
	r.tab.Add(40000)
	r.mu.Unlock()
	abort := func() error {
		if e := r.of.errorFor(xid); e != nil {
			return fmt.Errorf("switch refused a rule: %v", e)
		}
		return nil
	}
	if _, _, err := r.waitForward(ctx, hitRuleID, cfg.ProbeInterval, cfg.ConfirmTimeout, abort); err != nil {
		return err
	}
	r.progress("hit delay: %d probes through one installed rule", cfg.HitProbes)
	for i := 0; i < cfg.HitProbes; i++ {
		sent, at, err := r.waitForward(ctx, hitRuleID, 200*time.Millisecond, time.Second, nil)
		if err != nil {
			return err
		}
		res.Hit = append(res.Hit, at.Sub(sent))
		if err := sleepCtx(ctx, 2*time.Millisecond); err != nil {
			return err
		}
	}
	if err := r.deleteRules(ctx, []rule{{id: hitRuleID, prio: 40000}}, false); err != nil {
		return err
	}
	r.progress("PACKET_OUT: %d frames out of port %d", cfg.PacketOuts, res.OutPort)
	buf := make([]byte, 0, probeLen)
	for i := 0; i < cfg.PacketOuts; i++ {
		seq := r.nextSeq()
		buf = encodeProbe(buf[:0], probeIP(hitRuleID), kindPacketOut, seq)
		po := &openflow.PacketOut{Header: openflow.Header{Version: openflow.Version},
			BufferID: openflow.NoBuffer, InPort: openflow.PortNone,
			Actions: []openflow.Action{openflow.ActionOutput{Port: res.OutPort}}, Data: buf}
		sent := time.Now()
		if _, err := r.of.send(ctx, po); err != nil {
			return err
		}
		t := time.NewTimer(time.Second)
	wait:
		for {
			select {
			case e := <-r.out.rx:
				if e.hdr.kind == kindPacketOut && e.hdr.seq == seq {
					res.PacketOut = append(res.PacketOut, e.at.Sub(sent))
					break wait
				}
			case <-t.C:
				break wait
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			}
		}
		t.Stop()
		if err := sleepCtx(ctx, 5*time.Millisecond); err != nil {
			return err
		}
	}
	if len(res.PacketOut) == 0 {
		return errors.New("no PACKET_OUT frame came out of the switch")
	}
	return nil
}

// insertBatch installs rules back to back and times them to the data
// plane: from the first FLOW_MOD's send to the arrival of the first probe
// the last rule forwards.
func (r *runner) insertBatch(ctx context.Context, pattern string, rules []rule) (Batch, int, error) {
	b := Batch{Pattern: pattern}
	xids := make([]uint32, 0, len(rules))
	// Build every FLOW_MOD first so the sends follow each other within
	// microseconds: a gap between them while the switch's CPU is idle
	// would be counted as insert cost.
	msgs := make([]openflow.Message, len(rules))
	for i, ru := range rules {
		msgs[i] = r.addFlow(ru.id, ru.prio)
	}
	t0 := time.Now()
	for _, m := range msgs {
		xid, err := r.of.send(ctx, m)
		if err != nil {
			return b, 0, err
		}
		xids = append(xids, xid)
	}
	bdone := make(chan time.Duration, 1)
	bctx, bcancel := context.WithTimeout(ctx, r.cfg.ConfirmTimeout+time.Duration(len(rules))*r.lastPerRule*10)
	defer bcancel()
	go func() {
		if err := r.of.barrier(bctx); err != nil {
			bdone <- -1
			return
		}
		bdone <- time.Since(t0)
	}()
	failed := func() (int, *openflow.ErrorMsg) {
		for i, x := range xids {
			if e := r.of.errorFor(x); e != nil {
				return i, e
			}
		}
		return -1, nil
	}
	abort := func() error {
		if i, e := failed(); e != nil {
			return fmt.Errorf("flow mod %d of batch: %v", i, e)
		}
		return nil
	}
	// Near a full table one insert can take a large part of a second: the
	// wait scales with what the last batch took per rule.
	timeout := r.cfg.ConfirmTimeout + time.Duration(len(rules))*r.lastPerRule*10
	_, at, ferr := r.waitForward(ctx, rules[len(rules)-1].id, r.cfg.ProbeInterval, timeout, abort)
	bar := <-bdone
	// Errors come before the barrier reply: check again now.
	i, e := failed()
	accepted := len(rules)
	if e != nil {
		accepted = i
	}
	r.mu.Lock()
	for _, ru := range rules[:accepted] {
		in := r.tab.Add(ru.prio)
		r.live[ru.id] = ru
		b.Inserts = append(b.Inserts, in)
	}
	r.mu.Unlock()
	if e != nil {
		if e.Type == openflow.ErrorTypeFlowModFailed && e.Code == uint16(openflow.FlowModFailedAllTablesFull) {
			return b, accepted, errTableFull
		}
		return b, accepted, fmt.Errorf("switch refused a FLOW_MOD: %v", e)
	}
	if ferr != nil {
		return b, accepted, ferr
	}
	b.Duration, b.Barrier = at.Sub(t0), bar
	r.lastPerRule = b.Duration / time.Duration(len(rules))
	return b, accepted, nil
}

func (r *runner) measureInserts(ctx context.Context) error {
	cfg, res := r.cfg, r.res
	capacity := 0 // probe rules the fast table holds without evicting, once known
	plan := append([]string(nil), cfg.Patterns...)
	second := false
	for pi := 0; pi < len(plan); pi++ {
		pat := plan[pi]
		deadline, _ := ctx.Deadline()
		share := time.Until(deadline) / time.Duration(len(plan)-pi)
		pctx, cancel := context.WithTimeout(ctx, share)
		target := cfg.MaxRules
		if (pat != PatternAscending || second) && capacity > 0 {
			target = min(target, capacity)
		}
		err := r.fillPattern(pctx, pat, pi, target, capacity)
		budgetCut := errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil
		cancel()
		full := errors.Is(err, errTableFull)
		if full && (pat != PatternAscending || second) {
			// The ascending fill found the table's end; a later fill that
			// runs into it means the table changed under us.
			return fmt.Errorf("%s: the table filled up at %d rules, below the %d the ascending fill reached: is something else installing rules?", pat, r.tab.Len(), capacity)
		}
		if err != nil && !budgetCut && !full {
			return fmt.Errorf("%s: %w", pat, err)
		}
		if budgetCut {
			r.progress("%s: stopped at %d rules, its share of the budget (%v) used", pat, res.Fill[pat], share.Round(time.Second))
		}
		if full && res.TableFull == 0 {
			res.TableFull = r.tab.Len()
			r.progress("%s: table full (ALL_TABLES_FULL) at %d rules", pat, res.TableFull)
			capacity = res.Fill[pat] - 1
		}
		if pat == PatternAscending && !second && !budgetCut {
			c, err := r.probeCache(ctx)
			if err != nil {
				return err
			}
			if c.IsCache {
				capacity = c.Fast - 1 // leave a slot: the next fills must not evict
				r.progress("cache: %d of %d rules answer at hit speed, %d need a slow path (median %v)", c.Fast, c.Probed, c.Slow, c.SlowDelay.Median)
			} else {
				r.progress("cache: all %d rules answer at hit speed", c.Probed)
			}
		}
		overflowed := pat == PatternAscending && !second && capacity > 0
		if err := r.clearProbeRules(ctx, !overflowed); err != nil {
			return err
		}
		// The first ascending fill ran blind to the table's end; once the
		// end is known, a second one walks up to it in small batches,
		// where a slow path near a full table shows.
		if overflowed && !second {
			plan = append(plan, PatternAscending)
			second = true
		}
	}
	return nil
}

// nearFullBatches are the batch sizes in the last stretch before a known
// capacity: single inserts resolve where a slow path begins.
var nearFullBatches = []int{1, 3}

func (r *runner) fillPattern(ctx context.Context, pat string, pi, target, capacity int) error {
	cfg := r.cfg
	if err := r.installGuard(ctx); err != nil {
		return err
	}
	gen := NewPriorityGen(pat, cfg.Seed+uint64(pi))
	r.progress("%s: filling to %d rules", pat, target)
	n, k := 0, 0
	nearFull := target
	if capacity > 0 {
		nearFull = target - max(target/8, 40)
	}
	lastReport := time.Now()
	for n < target {
		sizes := cfg.BatchSizes
		if n >= nearFull {
			sizes = nearFullBatches
		}
		m := min(sizes[k%len(sizes)], target-n)
		k++
		rules := make([]rule, m)
		for j := range rules {
			rules[j] = rule{id: n + j, prio: gen.Next()}
		}
		b, acc, err := r.insertBatch(ctx, pat, rules)
		n += acc
		r.res.Fill[pat] = n
		if err != nil {
			return err
		}
		r.res.Batches = append(r.res.Batches, b)
		if time.Since(lastReport) > 2*time.Second {
			r.progress("%s: %d/%d rules, last batch of %d took %v", pat, n, target, m, b.Duration.Round(10*time.Microsecond))
			lastReport = time.Now()
		}
	}
	r.progress("%s: %d rules in", pat, n)
	return nil
}

// probeCache sends one probe per installed rule, newest first (so the
// rules found in the fast table are refreshed before any swap-in evicts
// the least recently used), and records each one's delay.
func (r *runner) probeCache(ctx context.Context) (CacheFit, error) {
	r.mu.Lock()
	ids := make([]int, 0, len(r.live))
	for id := range r.live {
		ids = append(ids, id)
	}
	r.mu.Unlock()
	sort.Sort(sort.Reverse(sort.IntSlice(ids)))
	r.progress("cache: probing each of the %d rules once", len(ids))
	r.res.CacheRules = r.tab.Len()
	r.res.Cache = r.res.Cache[:0]
	for _, id := range ids {
		sent, at, err := r.waitForward(ctx, id, 500*time.Millisecond, r.cfg.ConfirmTimeout, nil)
		if err != nil {
			return CacheFit{}, fmt.Errorf("cache probe: %w", err)
		}
		r.res.Cache = append(r.res.Cache, at.Sub(sent))
	}
	return FitCache(r.res.Cache), nil
}

// clearProbeRules deletes every probe rule and the guard, timing the
// deletes in batches of 10 and 50 (timed=false skips the timing).
func (r *runner) clearProbeRules(ctx context.Context, timed bool) error {
	r.mu.Lock()
	rules := make([]rule, 0, len(r.live))
	for _, ru := range r.live {
		rules = append(rules, ru)
	}
	r.mu.Unlock()
	sort.Slice(rules, func(i, j int) bool { return rules[i].id < rules[j].id })
	if err := r.deleteRules(ctx, rules, timed); err != nil {
		return err
	}
	return r.removeGuard(ctx)
}

func (r *runner) deleteRules(ctx context.Context, rules []rule, timed bool) error {
	sizes := []int{10, 50}
	for k := 0; len(rules) > 0; k++ {
		m := min(sizes[k%2], len(rules))
		t0 := time.Now()
		for _, ru := range rules[:m] {
			if _, err := r.of.send(ctx, deleteStrict(r.probeMatch(ru.id), ru.prio)); err != nil {
				return err
			}
		}
		if err := r.of.barrier(ctx); err != nil {
			return fmt.Errorf("barrier after deletes: %w", err)
		}
		if timed {
			r.res.Deletes = append(r.res.Deletes, DeleteBatch{N: m, Duration: time.Since(t0)})
		}
		r.mu.Lock()
		for _, ru := range rules[:m] {
			delete(r.live, ru.id)
			r.tab.Remove(ru.prio)
		}
		r.mu.Unlock()
		r.res.Cleanup.Deleted += m
		rules = rules[m:]
	}
	return nil
}

// cleanup removes everything calibrate installed and checks the table
// against the snapshot. If the connection is gone it reconnects once
// (dialling again, or waiting for the switch to come back to --listen).
func (r *runner) cleanup(ctx context.Context) {
	cr := &r.res.Cleanup
	select {
	case <-r.of.done():
		r.progress("clean-up: connection lost, reconnecting")
		of, err := connectSwitch(ctx, r.cfg.Switch, r.cfg.Listen, r.cfg.Log)
		if err != nil {
			cr.Err = fmt.Sprintf("could not reconnect to remove calibrate's rules (cookie 0x%x): %v", cookieBase>>48, err)
			r.progress("clean-up: %s", cr.Err)
			return
		}
		of.start()
		r.of = of
		defer of.close()
	default:
	}
	// Delete by what the switch holds, not by what we think we added: a
	// restarted switch holds none of them, one that lost messages more.
	// A BARRIER first: FLOW_MODs of an interrupted batch may still be
	// queued in the switch and appear only after a first read. Until a
	// read finds none (at most 5 rounds).
	n := 0
	for round := 0; round < 5; round++ {
		if err := r.of.barrier(ctx); err != nil {
			cr.Err = fmt.Sprintf("barrier before clean-up: %v", err)
			return
		}
		fl, err := r.of.flows(ctx)
		if err != nil {
			cr.Err = fmt.Sprintf("reading the flow table: %v", err)
			return
		}
		found := 0
		for _, f := range fl {
			if f.Cookie&cookieMask == cookieBase {
				if _, err := r.of.send(ctx, deleteStrict(f.Match, f.Priority)); err != nil {
					cr.Err = err.Error()
					return
				}
				found++
			}
		}
		n += found
		if found == 0 {
			break
		}
	}
	if err := r.of.barrier(ctx); err != nil {
		cr.Err = fmt.Sprintf("barrier after clean-up: %v", err)
		return
	}
	cr.Deleted += n
	fl, err := r.of.flows(ctx)
	if err != nil {
		cr.Err = fmt.Sprintf("verifying the flow table: %v", err)
		return
	}
	type key struct {
		m    openflow.Match
		prio uint16
	}
	before := map[key]int{}
	for _, f := range r.snapshot {
		before[key{f.Match, f.Priority}]++
	}
	for _, f := range fl {
		if f.Cookie&cookieMask == cookieBase {
			cr.Leftover++
			continue
		}
		k := key{f.Match, f.Priority}
		if before[k] == 0 {
			cr.Changed++
			continue
		}
		before[k]--
	}
	for _, v := range before {
		cr.Changed += v
	}
	cr.Verified = cr.Leftover == 0
	if r.res.Partial && len(r.snapshot) > 0 && cr.Changed > 0 {
		// The switch restarted or aged rules: not calibrate's doing, but say so.
		cr.Err = fmt.Sprintf("%d of the switch's own rules differ from the snapshot", cr.Changed)
	}
	r.progress("clean-up: %d calibrate rules removed; table now %d rules (%d before), %d left over, %d of the switch's own changed",
		n, len(fl), len(r.snapshot), cr.Leftover, cr.Changed)
}

package probes

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
)

var epoch = time.Date(2016, 3, 1, 0, 0, 0, 0, time.UTC)

// testLink is the tiny in-test network: it delivers each packet to `to`
// after delay(p) on the clock, or drops it when delay says so. It records
// every packet it carried, with the time it was handed over.
type testLink struct {
	clk   clock.Clock
	to    Receiver
	delay func(p ProbePacket) (d time.Duration, deliver bool)
	dup   bool // deliver every packet twice
	log   []string
}

func (l *testLink) Send(p ProbePacket) error {
	d, ok := l.delay(p)
	l.log = append(l.log, fmt.Sprintf("%v %s %v #%d a%d seq=%d ack=%d drop=%v",
		p.SentAt.Sub(epoch), p.Type, p.Tuple, p.Index, p.Attempt, p.Seq, p.Ack, !ok))
	if !ok {
		return nil
	}
	l.clk.AfterFunc(d, func() { l.to.Deliver(p) })
	if l.dup {
		l.clk.AfterFunc(d, func() { l.to.Deliver(p) })
	}
	return nil
}

func fixed(d time.Duration) func(ProbePacket) (time.Duration, bool) {
	return func(ProbePacket) (time.Duration, bool) { return d, true }
}

// testbed wires prober → fwd link → responder → back link → prober on a Sim.
type testbed struct {
	sim       *clock.Sim
	fwd, back *testLink
	probe     *Probe
	resp      *Responder
}

func newTestbed(t *testing.T, kind Kind, cfg Config, fwd, back func(ProbePacket) (time.Duration, bool)) *testbed {
	t.Helper()
	sim := clock.NewSim(epoch)
	tb := &testbed{sim: sim, fwd: &testLink{clk: sim, delay: fwd}, back: &testLink{clk: sim, delay: back}}
	var err error
	if kind == KindSYN {
		tb.probe, err = NewSYNProbe(sim, tb.fwd, cfg)
	} else {
		tb.probe, err = NewDataProbe(sim, tb.fwd, cfg)
	}
	if err != nil {
		t.Fatal(err)
	}
	if tb.resp, err = NewResponder(sim, tb.back, nil); err != nil {
		t.Fatal(err)
	}
	tb.fwd.to, tb.back.to = tb.resp, tb.probe
	return tb
}

func (tb *testbed) run(t *testing.T) []Result {
	t.Helper()
	if err := tb.probe.Start(); err != nil {
		t.Fatal(err)
	}
	tb.sim.Run()
	select {
	case <-tb.probe.Done():
	default:
		t.Fatal("scheduler drained but probe not done")
	}
	return tb.probe.Results()
}

func TestProbeFixedDelayExactRTT(t *testing.T) {
	for _, kind := range []Kind{KindSYN, KindData} {
		t.Run(kind.String(), func(t *testing.T) {
			const n, rate = 250, 1000.0
			tb := newTestbed(t, kind, Config{Count: n, Rate: rate, Seed: 1},
				fixed(30*time.Millisecond), fixed(20*time.Millisecond))
			rs := tb.run(t)
			for i, r := range rs {
				wantSent := epoch.Add(time.Duration(i) * time.Millisecond)
				if !r.Answered || r.RTT != 50*time.Millisecond || !r.Sent.Equal(wantSent) ||
					!r.Received.Equal(wantSent.Add(50*time.Millisecond)) || r.Index != i {
					t.Fatalf("result %d = %+v", i, r)
				}
			}
			st := tb.probe.Stats()
			if st != (Stats{Sent: n, Answered: n}) {
				t.Fatalf("stats = %+v", st)
			}
			rst := tb.resp.Stats()
			if (kind == KindSYN && rst.SYNs != n) || (kind == KindData && rst.Data != n) {
				t.Fatalf("responder stats = %+v", rst)
			}
			// The scheduler stops at the last reply: per-probe timeouts were
			// stopped, not left to advance the clock.
			if want := epoch.Add(249*time.Millisecond + 50*time.Millisecond); !tb.sim.Now().Equal(want) {
				t.Fatalf("sim ended at %v, want %v", tb.sim.Now().Sub(epoch), want.Sub(epoch))
			}
			s := tb.probe.Summary()
			if s.Mean != 50*time.Millisecond || s.P99 != 50*time.Millisecond || s.Unanswered != 0 {
				t.Fatalf("summary = %+v", s)
			}
		})
	}
}

func TestProbeRateHonoured(t *testing.T) {
	tests := []struct {
		n    int
		rate float64
		want time.Duration // (N−1)/R
	}{
		{250, 10, 24900 * time.Millisecond},
		{250, 100, 2490 * time.Millisecond},
		{400, 1000, 399 * time.Millisecond},
		{400, 5000, 79800 * time.Microsecond},
		{4, 3, time.Second}, // 1/3 s steps round per packet but never drift
		{1, 10, 0},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d@%vpps", tc.n, tc.rate), func(t *testing.T) {
			tb := newTestbed(t, KindSYN, Config{Count: tc.n, Rate: tc.rate}, fixed(0), fixed(0))
			rs := tb.run(t)
			if got := rs[len(rs)-1].Sent.Sub(rs[0].Sent); got != tc.want {
				t.Fatalf("first→last send = %v, want %v", got, tc.want)
			}
			// Evenly spaced: each gap within 1 ns of 1/R.
			gap := time.Duration(float64(time.Second) / tc.rate)
			for i := 1; i < len(rs); i++ {
				if d := rs[i].Sent.Sub(rs[i-1].Sent) - gap; d < -1 || d > 1 {
					t.Fatalf("gap %d = %v, want %v", i, rs[i].Sent.Sub(rs[i-1].Sent), gap)
				}
			}
		})
	}
}

func TestProbeStaircaseClassification(t *testing.T) {
	// Flow i is held i × 700 ms by the "switch": RTT_i = 0.7·i s exactly.
	tb := newTestbed(t, KindSYN, Config{Count: 120, Rate: 100},
		func(p ProbePacket) (time.Duration, bool) {
			return time.Duration(p.Index) * 700 * time.Millisecond, true
		},
		fixed(0))
	rs := tb.run(t)
	for i, r := range rs {
		if r.RTT != time.Duration(i)*700*time.Millisecond {
			t.Fatalf("RTT %d = %v", i, r.RTT)
		}
	}
	// i ≤ 8 below 5.8 s; 9..34 below 24 s; 35..107 below 75 s; 108..119 beyond.
	got := Count(RTTs(rs), Bins(Berkeley(), KindSYN))
	if want := []int{9, 26, 73, 12}; !slices.Equal(got, want) {
		t.Fatalf("bin counts = %v, want %v", got, want)
	}
}

func TestProbeDeterministic(t *testing.T) {
	run := func(seed uint64) string {
		jitter := func(p ProbePacket) (time.Duration, bool) {
			// Deterministic "switch" delay depending on the tuple, so the
			// trace depends on the generated tuples (and thus the seed).
			return time.Duration(p.Tuple.SrcPort%97) * time.Millisecond, p.Tuple.SrcPort%13 != 0
		}
		tb := newTestbed(t, KindData, Config{Count: 300, Rate: 5000, Seed: seed, Timeout: time.Second}, jitter, fixed(time.Millisecond))
		rs := tb.run(t)
		var b strings.Builder
		for _, l := range tb.fwd.log {
			b.WriteString(l + "\n")
		}
		for _, l := range tb.back.log {
			b.WriteString(l + "\n")
		}
		for _, r := range rs {
			fmt.Fprintf(&b, "%+v\n", r)
		}
		fmt.Fprintf(&b, "%+v\n", tb.probe.Stats())
		return b.String()
	}
	a := run(9)
	if a != run(9) {
		t.Fatal("two runs with the same seed differ")
	}
	if a == run(10) {
		t.Fatal("different seeds give identical traces; the check is vacuous")
	}
}

func TestProbeUnansweredAndLate(t *testing.T) {
	const timeout = 2 * time.Second
	// Even flows are dropped; flow 1 is answered after the timeout (late);
	// the other odd flows after 10 ms.
	fwd := func(p ProbePacket) (time.Duration, bool) {
		switch {
		case p.Index%2 == 0:
			return 0, false
		case p.Index == 1:
			return 3 * time.Second, true
		}
		return 10 * time.Millisecond, true
	}
	tb := newTestbed(t, KindSYN, Config{Count: 10, Rate: 10, Timeout: timeout}, fwd, fixed(0))
	rs := tb.run(t)
	for i, r := range rs {
		wantAnswered := i%2 == 1 && i != 1
		if r.Answered != wantAnswered {
			t.Fatalf("result %d answered=%v, want %v", i, r.Answered, wantAnswered)
		}
		if !r.Answered && (r.RTT != 0 || !r.Received.IsZero()) {
			t.Fatalf("unanswered result %d carries RTT %v", i, r.RTT)
		}
	}
	st := tb.probe.Stats()
	if st.Answered != 4 || st.Unanswered != 6 || st.Late != 1 {
		t.Fatalf("stats = %+v", st)
	}
	if s := Summarize(rs); s.Unanswered != 6 || s.Answered != 4 {
		t.Fatalf("summary = %+v", s)
	}
}

func TestProbeDoneAtLastTimeout(t *testing.T) {
	// Everything dropped: Done fires exactly Timeout after the last send.
	tb := newTestbed(t, KindSYN, Config{Count: 5, Rate: 10}, func(ProbePacket) (time.Duration, bool) { return 0, false }, fixed(0))
	tb.run(t)
	if want := epoch.Add(400*time.Millisecond + DefaultTimeout); !tb.sim.Now().Equal(want) {
		t.Fatalf("finished at %v, want %v", tb.sim.Now().Sub(epoch), want.Sub(epoch))
	}
}

func TestProbeDuplicatesAndStrays(t *testing.T) {
	tb := newTestbed(t, KindSYN, Config{Count: 3, Rate: 10}, fixed(time.Millisecond), fixed(time.Millisecond))
	tb.back.dup = true
	rs := tb.run(t)
	if st := tb.probe.Stats(); st.Answered != 3 || st.Duplicate != 3 {
		t.Fatalf("stats = %+v", st)
	}
	good := FiveTuple{SrcIP: rs[0].Tuple.DstIP, DstIP: rs[0].Tuple.SrcIP, SrcPort: rs[0].Tuple.DstPort, DstPort: rs[0].Tuple.SrcPort, Proto: ProtoTCP}
	strays := []ProbePacket{
		{Type: PacketSYNACK, Tuple: good, Ack: 12345},     // wrong ack
		{Type: PacketACK, Tuple: good},                    // wrong type for a SYN probe
		{Type: PacketSYNACK, Tuple: rs[0].Tuple},          // not reversed
		{Type: PacketSYNACK, Tuple: FiveTuple{Proto: 17}}, // unknown flow
	}
	for _, p := range strays {
		tb.probe.Deliver(p)
	}
	if st := tb.probe.Stats(); st.Stray != len(strays) || st.Answered != 3 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestProbeDataAcknowledgesPayload(t *testing.T) {
	var acks []uint32
	var seqs []uint32
	fwd := func(p ProbePacket) (time.Duration, bool) {
		if p.Type != PacketData || p.PayloadLen != 100 {
			t.Errorf("data probe sent %v with %d bytes", p.Type, p.PayloadLen)
		}
		seqs = append(seqs, p.Seq)
		return 0, true
	}
	back := func(p ProbePacket) (time.Duration, bool) {
		acks = append(acks, p.Ack)
		return 0, true
	}
	tb := newTestbed(t, KindData, Config{Count: 4, Rate: 10, PayloadLen: 100}, fwd, back)
	tb.run(t)
	for i := range seqs {
		if acks[i] != seqs[i]+100 {
			t.Fatalf("ack %d = %d, want seq+100 = %d", i, acks[i], seqs[i]+100)
		}
	}
	if tb.probe.Stats().Answered != 4 {
		t.Fatalf("stats = %+v", tb.probe.Stats())
	}
}

func TestProbeRetransmissionModelling(t *testing.T) {
	tests := []struct {
		name        string
		kind        Kind
		answerFrom  int           // first attempt the network lets through (-1: none)
		firstDelay  time.Duration // one-way delay of attempt 0 when it is let through
		laterDelay  time.Duration // one-way delay of retransmissions
		wantRTT     time.Duration
		wantRetx    int
		wantAnswer  bool
		wantSendsAt []time.Duration // attempt send times relative to the first send
	}{
		{"syn answered on first", KindSYN, 0, 0, 0, 10 * time.Millisecond, 0, true, secs(0)},
		{"syn answered on first retransmission", KindSYN, 1, 0, 0, 5800*time.Millisecond + 10*time.Millisecond, 1, true, secs(0, 5.8)},
		{"syn never answered gives up at 75 s", KindSYN, -1, 0, 0, 0, 0, false, secs(0, 5.8, 24)},
		{"slow first SYN beats a slower retransmission", KindSYN, 0, 7 * time.Second, 10 * time.Second, 7*time.Second + 10*time.Millisecond, 1, true, secs(0, 5.8)},
		{"data answered on third retransmission", KindData, 3, 0, 0, 10500*time.Millisecond + 10*time.Millisecond, 3, true, secs(0, 1.5, 4.5, 10.5)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var sendsAt []time.Duration
			fwd := func(p ProbePacket) (time.Duration, bool) {
				sendsAt = append(sendsAt, p.SentAt.Sub(epoch))
				if tc.answerFrom < 0 || p.Attempt < tc.answerFrom {
					return 0, false
				}
				if p.Attempt == 0 {
					return tc.firstDelay, true
				}
				return tc.laterDelay, true
			}
			tb := newTestbed(t, tc.kind, Config{Count: 1, Rate: 1, Retransmit: true, Profile: Berkeley()}, fwd, fixed(10*time.Millisecond))
			r := tb.run(t)[0]
			if r.Answered != tc.wantAnswer || r.RTT != tc.wantRTT || r.Retransmits != tc.wantRetx {
				t.Fatalf("result = %+v", r)
			}
			if !slices.Equal(sendsAt, tc.wantSendsAt) {
				t.Fatalf("sends at %v, want %v", sendsAt, tc.wantSendsAt)
			}
			if !tc.wantAnswer {
				if want := epoch.Add(Berkeley().SYNGiveUp); !tb.sim.Now().Equal(want) {
					t.Fatalf("gave up at %v, want 75s", tb.sim.Now().Sub(epoch))
				}
			}
			st := tb.probe.Stats()
			if st.Retransmitted != len(tc.wantSendsAt)-1 {
				t.Fatalf("stats = %+v", st)
			}
			// A reply to a retransmission that lost the race is a duplicate.
			if wantDup := tc.laterDelay > 0 && tc.wantAnswer; wantDup != (st.Duplicate == 1) {
				t.Fatalf("duplicates = %d (stats %+v)", st.Duplicate, st)
			}
		})
	}
}

func TestProbeSendError(t *testing.T) {
	sim := clock.NewSim(epoch)
	fail := SenderFunc(func(p ProbePacket) error {
		if p.Index == 1 {
			return errors.New("no route")
		}
		return nil
	})
	p, err := NewSYNProbe(sim, fail, Config{Count: 3, Rate: 10})
	if err != nil {
		t.Fatal(err)
	}
	p.Start()
	sim.RunFor(time.Second)
	if st := p.Stats(); st.SendErrors != 1 || st.Unanswered != 1 {
		t.Fatalf("stats = %+v", st)
	}
	sim.Run()
	if st := p.Stats(); st.Unanswered != 3 {
		t.Fatalf("stats = %+v", st)
	}
}

type recordingObserver struct {
	mu   sync.Mutex
	rtts map[Kind][]time.Duration
}

func (o *recordingObserver) ObserveRTT(k Kind, rtt time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.rtts == nil {
		o.rtts = map[Kind][]time.Duration{}
	}
	o.rtts[k] = append(o.rtts[k], rtt)
}

func TestProbeObserver(t *testing.T) {
	obs := &recordingObserver{}
	tb := newTestbed(t, KindData, Config{Count: 5, Rate: 10, Observer: obs},
		func(p ProbePacket) (time.Duration, bool) { return time.Duration(p.Index) * time.Millisecond, true }, fixed(0))
	tb.run(t)
	if got := obs.rtts[KindData]; !slices.Equal(got, ms(0, 1, 2, 3, 4)) || len(obs.rtts[KindSYN]) != 0 {
		t.Fatalf("observed %v", obs.rtts)
	}
}

func TestProbeConfigErrors(t *testing.T) {
	sim := clock.NewSim(epoch)
	out := SenderFunc(func(ProbePacket) error { return nil })
	tu, _ := GenerateTuples(2, TupleSpec{}, 0)
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no count", Config{Rate: 1}, "count 0 must be positive"},
		{"no rate", Config{Count: 1}, "rate 0 pps must be positive"},
		{"negative timeout", Config{Count: 1, Rate: 1, Timeout: -1}, "timeout -1ns"},
		{"too few tuples", Config{Count: 3, Rate: 1, Tuples: tu}, "2 tuples for 3 probes"},
		{"duplicate tuples", Config{Count: 2, Rate: 1, Tuples: []FiveTuple{tu[0], tu[0]}}, "tuples 0 and 1"},
		{"bad profile", Config{Count: 1, Rate: 1, Profile: TimerProfile{Name: "x"}}, `timer profile "x"`},
	}
	for _, tc := range tests {
		_, err := NewSYNProbe(sim, out, tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	p, _ := NewSYNProbe(sim, out, Config{Count: 1, Rate: 1})
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err == nil {
		t.Fatal("second Start accepted")
	}
}

func TestResponderIgnoresReplies(t *testing.T) {
	sim := clock.NewSim(epoch)
	var sent []ProbePacket
	r, _ := NewResponder(sim, SenderFunc(func(p ProbePacket) error { sent = append(sent, p); return nil }), nil)
	r.Deliver(ProbePacket{Type: PacketSYNACK})
	r.Deliver(ProbePacket{Type: PacketACK})
	r.Deliver(ProbePacket{Type: PacketSYN, Seq: 41, Attempt: 2})
	if st := r.Stats(); st.Ignored != 2 || st.SYNs != 1 || len(sent) != 1 {
		t.Fatalf("stats = %+v, sent %v", st, sent)
	}
	if sent[0].Ack != 42 || sent[0].Attempt != 2 || sent[0].Type != PacketSYNACK {
		t.Fatalf("reply = %+v", sent[0])
	}
}

// TestProbeWallClock runs the same logic on the real clock, where timers
// fire on their own goroutines (run with -race).
func TestProbeWallClock(t *testing.T) {
	wall := clock.Wall{}
	var resp *Responder
	var probe *Probe
	fwd := SenderFunc(func(p ProbePacket) error {
		time.AfterFunc(time.Millisecond, func() { resp.Deliver(p) })
		return nil
	})
	back := SenderFunc(func(p ProbePacket) error { probe.Deliver(p); return nil }) // synchronous
	resp, _ = NewResponder(wall, back, nil)
	probe, err := NewSYNProbe(wall, fwd, Config{Count: 20, Rate: 1000, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := probe.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-probe.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("not done; stats %+v", probe.Stats())
	}
	for _, r := range probe.Results() {
		if !r.Answered || r.RTT < time.Millisecond {
			t.Fatalf("result %+v", r)
		}
	}
}

// BenchmarkProbeSim measures the cost per probe of a full SYN probe +
// responder run on the Sim clock (send, link, reply, RTT record), the
// inner loop of every simulated experiment.
func BenchmarkProbeSim(b *testing.B) {
	const n = 4000
	b.ReportAllocs()
	for b.Loop() {
		sim := clock.NewSim(epoch)
		var probe *Probe
		var resp *Responder
		fwd := SenderFunc(func(p ProbePacket) error {
			sim.AfterFunc(50*time.Microsecond, func() { resp.Deliver(p) })
			return nil
		})
		back := SenderFunc(func(p ProbePacket) error {
			sim.AfterFunc(50*time.Microsecond, func() { probe.Deliver(p) })
			return nil
		})
		resp, _ = NewResponder(sim, back, nil)
		probe, _ = NewSYNProbe(sim, fwd, Config{Count: n, Rate: 5000})
		probe.Start()
		sim.Run()
		if probe.Stats().Answered != n {
			b.Fatal("not all answered")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/probe")
}

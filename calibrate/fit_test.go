package calibrate

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func within(t *testing.T, what string, got, want time.Duration, tol float64) {
	t.Helper()
	if math.Abs(float64(got-want)) > tol*float64(want) {
		t.Errorf("%s = %v, want %v ± %.0f %%", what, got, want, tol*100)
	}
}

func TestLeastSquaresRecoversExactLine(t *testing.T) {
	var x [][]float64
	var y []float64
	for i := 0; i < 20; i++ {
		x = append(x, []float64{1, float64(i), float64(i * i * 1000)})
		y = append(y, 3+2*float64(i)+0.5*float64(i*i*1000))
	}
	f, err := leastSquares(x, y)
	if err != nil {
		t.Fatal(err)
	}
	for j, want := range []float64{3, 2, 0.5} {
		if math.Abs(f.Beta[j]-want) > 1e-6*math.Max(1, want) {
			t.Errorf("beta[%d] = %v, want %v", j, f.Beta[j], want)
		}
	}
	if _, err := leastSquares([][]float64{{1, 0}, {1, 0}, {1, 0}}, []float64{1, 2, 3}); err == nil {
		t.Error("a zero column must be reported singular")
	}
}

// synthSwitch is a TCAM with a known cost model; it produces the batches
// calibrate's run would measure, with Gaussian noise per batch.
type synthSwitch struct {
	layout                     string
	capacity, window           int
	cWrite, cMove, cSlow, over time.Duration
	noise                      time.Duration
	// activation: the rule forwards this long after the BARRIER_REPLY's
	// switch-side instant (install.activation_delay).
	activation time.Duration
	rng        *rand.Rand
}

// Seen from calibrate: the BARRIER_REPLY one channel latency after the
// switch is done, the confirmation one hit delay and a probe wait after
// the rule is active (synthResult's echo and hit samples).
const (
	synthLatency = 100 * time.Microsecond // half synthResult's 200 µs echo
	synthHit     = 65 * time.Microsecond  // about synthResult's hit median
)

func (s synthSwitch) batches(t *testing.T, fill int) []Batch {
	t.Helper()
	var out []Batch
	for _, pat := range []string{"ascending", "descending", "constant", "random"} {
		var tab PriorityTable
		tab.Add(0) // the guard rule
		gen := NewPriorityGen(pat, 1)
		n := 0
		for k := 0; n < fill; k++ {
			m := 5
			if k%2 == 1 {
				m = 20
			}
			m = min(m, fill-n)
			b := Batch{Pattern: pat}
			var d float64 = float64(s.over)
			for j := 0; j < m; j++ {
				in := tab.Add(gen.Next())
				b.Inserts = append(b.Inserts, in)
				mv := float64(in.Moves(s.layout))
				c := s.cMove
				if s.window > 0 && s.capacity-in.Occ <= s.window {
					c = s.cSlow
				}
				d += float64(s.cWrite) + mv*float64(c)
			}
			d += s.rng.NormFloat64() * float64(s.noise)
			b.Duration = time.Duration(d)
			// A spread-out probe wait in [0, 200 µs) that leaves s.rng's
			// sequence as the other fits' fixtures expect.
			probeWait := time.Duration(len(out)*7919%200) * time.Microsecond
			b.Barrier = b.Duration - s.activation - synthHit - probeWait + synthLatency
			out = append(out, b)
			n += m
		}
	}
	return out
}

func TestFitInsertsRecoversPica8LikeTCAM(t *testing.T) {
	s := synthSwitch{layout: LayoutHighestFirst, capacity: 300, window: 20,
		cWrite: 300 * time.Microsecond, cMove: 14400 * time.Nanosecond, cSlow: 70 * time.Microsecond,
		over: 1500 * time.Microsecond, noise: 500 * time.Microsecond, rng: rand.New(rand.NewPCG(1, 2))}
	f, err := FitInserts(s.batches(t, 299), 300)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fit: %+v", f)
	if f.Layout != LayoutHighestFirst {
		t.Fatalf("layout %q, want highest-first (alternatives %+v)", f.Layout, f.Alternatives)
	}
	within(t, "c_write", f.CWrite, s.cWrite, 0.10)
	within(t, "c_move", f.CMove, s.cMove, 0.10)
	within(t, "c_slow", f.CSlow, s.cSlow, 0.10)
	if f.SlowWindow < 16 || f.SlowWindow > 24 {
		t.Errorf("slow window %d, want 20 ± 4 (batch granularity)", f.SlowWindow)
	}
}

func TestFitInsertsLowestFirstAndFlat(t *testing.T) {
	s := synthSwitch{layout: LayoutLowestFirst, capacity: 1000,
		cWrite: 200 * time.Microsecond, cMove: 20 * time.Microsecond,
		over: time.Millisecond, noise: 300 * time.Microsecond, rng: rand.New(rand.NewPCG(3, 4))}
	f, err := FitInserts(s.batches(t, 400), 1000)
	if err != nil {
		t.Fatal(err)
	}
	if f.Layout != LayoutLowestFirst || f.SlowWindow != 0 {
		t.Errorf("layout %q window %d, want lowest-first without slow path", f.Layout, f.SlowWindow)
	}
	within(t, "c_move", f.CMove, s.cMove, 0.10)

	// Open vSwitch-like: cost independent of priorities.
	s = synthSwitch{layout: LayoutFlat, capacity: 100000,
		cWrite: 50 * time.Microsecond, over: 2 * time.Millisecond, noise: 200 * time.Microsecond,
		rng: rand.New(rand.NewPCG(5, 6))}
	f, err = FitInserts(s.batches(t, 400), 100000)
	if err != nil {
		t.Fatal(err)
	}
	if f.Layout != LayoutFlat {
		t.Errorf("layout %q, want flat (alternatives %+v)", f.Layout, f.Alternatives)
	}
	within(t, "c_write", f.CWrite, s.cWrite, 0.15)
}

func TestFitBurstFindsBatchesAndRate(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	p := 4200 * time.Microsecond
	var at []time.Duration
	for b := 0; b < 12; b++ {
		base := time.Duration(b*25)*p + 25*p
		for i := 0; i < 25; i++ {
			at = append(at, base+time.Duration(i)*3*time.Microsecond+time.Duration(rng.IntN(20))*time.Microsecond)
		}
	}
	f, err := FitBurst(at)
	if err != nil {
		t.Fatal(err)
	}
	if f.BatchSize != 25 {
		t.Errorf("batch %d, want 25 (groups %v)", f.BatchSize, f.Groups)
	}
	within(t, "p", f.PacketInCost, p, 0.05)

	// Unbatched: one Packet-In per 1 ms with ±100 µs jitter.
	at = at[:0]
	for i := 0; i < 200; i++ {
		at = append(at, time.Duration(i)*time.Millisecond+time.Duration(rng.IntN(200))*time.Microsecond)
	}
	f, err = FitBurst(at)
	if err != nil {
		t.Fatal(err)
	}
	if f.BatchSize != 1 {
		t.Errorf("batch %d, want 1", f.BatchSize)
	}
	within(t, "p", f.PacketInCost, time.Millisecond, 0.05)
}

func TestFitFlushPeriodicAndOneShot(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	// Misses at random times, released by ticks every 120 ms (anchor
	// 7 ms), plus a scheduling tail of up to 3 ms and one 25 ms outlier.
	var d, at []time.Duration
	T := 120 * time.Millisecond
	now := time.Duration(0)
	for i := 0; i < 25; i++ {
		now += time.Duration((0.5 + rng.Float64()) * float64(250*time.Millisecond))
		built := now + 4200*time.Microsecond
		k := (built-7*time.Millisecond)/T + 1
		rel := 7*time.Millisecond + k*T + time.Duration(rng.Float64()*float64(3*time.Millisecond))
		if i == 10 || i == 0 {
			rel += 25 * time.Millisecond // the first one too: the reference
		}
		d = append(d, rel-now)
		at = append(at, rel)
	}
	f, err := FitFlush(d, nil, 4200*time.Microsecond, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Periodic {
		t.Fatal("uniform delays must read as a periodic timer")
	}
	t.Logf("range estimate %v", f.Period)
	f, err = FitFlush(d, at, 4200*time.Microsecond, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Lattice {
		t.Fatal("the arrivals' lattice was not found")
	}
	within(t, "lattice period", f.Period, T, 0.02)

	d = d[:0]
	for i := 0; i < 40; i++ {
		d = append(d, 50*time.Millisecond+time.Duration(rng.IntN(1000))*time.Microsecond)
	}
	f, err = FitFlush(d, nil, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if f.Periodic {
		t.Errorf("constant delays read as periodic: %+v", f)
	}
	within(t, "one-shot wait", f.Period, 50500*time.Microsecond, 0.05)
}

func TestFitQueueAndCache(t *testing.T) {
	q := FitQueue(2000, 1030, 21*time.Millisecond, 4200*time.Microsecond)
	if q.Dropped != 970 || q.Limit != 1024 {
		t.Errorf("queue %+v, want 970 dropped, limit 1024", q)
	}
	if q := FitQueue(500, 500, time.Millisecond, time.Millisecond); !q.LowerBound || q.Limit != 500 {
		t.Errorf("no drops: %+v, want lower bound 500", q)
	}
	var d []time.Duration
	for i := 0; i < 300; i++ {
		d = append(d, 60*time.Microsecond+time.Duration(i%7)*100*time.Microsecond)
	}
	for i := 0; i < 60; i++ {
		d = append(d, 9*time.Millisecond+time.Duration(i)*50*time.Microsecond)
	}
	c := FitCache(d)
	if !c.IsCache || c.Fast != 300 || c.Slow != 60 {
		t.Errorf("cache %+v, want 300 fast, 60 slow", c)
	}
	// A loaded host: some hits stretched to 10-40 ms, two slow probes to
	// 150 ms. The split stays where the cache ends.
	noisy := append([]time.Duration(nil), d...)
	for _, i := range []int{20, 90, 91, 200, 250} {
		noisy[i] = time.Duration(10+i%30) * time.Millisecond
	}
	noisy[310], noisy[340] = 150*time.Millisecond, 160*time.Millisecond
	if c := FitCache(noisy); !c.IsCache || c.Fast != 300 {
		t.Errorf("noisy cache %+v, want 300 fast", c)
	}
	if c := FitCache(d[:300]); c.IsCache || c.Fast != 300 {
		t.Errorf("no cache %+v", c)
	}
}

func TestPriorityTableCountsShifts(t *testing.T) {
	var tab PriorityTable
	for _, p := range []uint16{0, 10, 20} {
		tab.Add(p)
	}
	in := tab.Add(10)
	if in.Occ != 3 || in.Lower != 1 || in.Higher != 1 {
		t.Errorf("insert 10 into {0,10,20}: %+v, want occ 3, lower 1, higher 1", in)
	}
	tab.Remove(10)
	if tab.Len() != 3 {
		t.Errorf("len %d after remove, want 3", tab.Len())
	}
}

func TestFitBurstStallIsNotBatching(t *testing.T) {
	// Open vSwitch-like: Packet-Ins 250 µs apart with one 4 s stall.
	var at []time.Duration
	for i := 0; i < 256; i++ {
		d := time.Duration(i) * 250 * time.Microsecond
		if i >= 31 {
			d += 4 * time.Second
		}
		at = append(at, d)
	}
	f, err := FitBurst(at)
	if err != nil {
		t.Fatal(err)
	}
	if f.BatchSize != 1 {
		t.Errorf("batch %d, want 1 (a stall is not a batch)", f.BatchSize)
	}
	// Unbatched, the ceiling is the throughput over the whole burst,
	// stall included.
	within(t, "p", f.PacketInCost, (4*time.Second+255*250*time.Microsecond)/255, 0.01)
	// One slow rule among 4 000 is noise, not a cache.
	d := make([]time.Duration, 4000)
	for i := range d {
		d[i] = 80 * time.Microsecond
	}
	d[17] = 19 * time.Millisecond
	if c := FitCache(d); c.IsCache {
		t.Errorf("one slow probe read as a cache: %+v", c)
	}
}

func TestFitInsertsIgnoresStalledBatches(t *testing.T) {
	s := synthSwitch{layout: LayoutHighestFirst, capacity: 300, window: 20,
		cWrite: 300 * time.Microsecond, cMove: 14400 * time.Nanosecond, cSlow: 70 * time.Microsecond,
		over: 1500 * time.Microsecond, noise: 500 * time.Microsecond, rng: rand.New(rand.NewPCG(13, 14))}
	bs := s.batches(t, 299)
	// The host stalls the switch for 400 ms in three batches.
	for _, i := range []int{3, 40, 77} {
		bs[i].Duration += 400 * time.Millisecond
	}
	f, err := FitInserts(bs, 300)
	if err != nil {
		t.Fatal(err)
	}
	if f.Layout != LayoutHighestFirst {
		t.Fatalf("layout %q (alternatives %+v)", f.Layout, f.Alternatives)
	}
	within(t, "c_write", f.CWrite, s.cWrite, 0.10)
	within(t, "c_move", f.CMove, s.cMove, 0.10)
	within(t, "c_slow", f.CSlow, s.cSlow, 0.10)
}

// The activation delay comes back from confirmation − BARRIER_REPLY
// within 5 %; a switch whose BARRIER waits
// for the data plane gets 0 (not resolved).
func TestFitActivation(t *testing.T) {
	hit := Summarise([]time.Duration{synthHit})
	echo := Summarise([]time.Duration{2 * synthLatency})
	for _, want := range []time.Duration{0, 6 * time.Millisecond} {
		s := synthSwitch{layout: LayoutHighestFirst, capacity: 4000, cWrite: 3 * time.Microsecond,
			over: want + 500*time.Microsecond, noise: 200 * time.Microsecond, activation: want, rng: rand.New(rand.NewPCG(3, 4))}
		f, ok := FitActivation(s.batches(t, 1000), hit, echo, 200*time.Microsecond)
		if !ok {
			t.Fatal("no fit")
		}
		t.Logf("want %v: %+v", want, f)
		if want == 0 {
			if f.Resolved || f.Delay != 0 {
				t.Errorf("activation %v (raw %v ± %v), want 0 (not resolved)", f.Delay, f.Raw, f.SE)
			}
			continue
		}
		if !f.Resolved {
			t.Fatalf("not resolved: raw %v ± %v", f.Raw, f.SE)
		}
		within(t, "activation", f.Delay, want, 0.05)
	}
}

// Open vSwitch's two modes: a share of batches waits one revalidation R,
// the rest forwards at once. The fit counts the immediate ones, reports
// the waiting level (R within 5 %) and resolves the mean.
func TestFitActivationBimodal(t *testing.T) {
	const R = 4500 * time.Microsecond
	rng := rand.New(rand.NewPCG(5, 6))
	var bs []Batch
	waited := 0
	for i := range 300 {
		bar := 200*time.Microsecond + time.Duration(rng.IntN(100))*time.Microsecond
		gap := 100*time.Microsecond + time.Duration(rng.IntN(100))*time.Microsecond
		if (i/20)%3 != 0 { // runs of 20 in one mode, two thirds waiting
			gap = R + time.Duration(rng.IntN(400)-200)*time.Microsecond
			waited++
		}
		bs = append(bs, Batch{Pattern: "ascending", Barrier: bar, Duration: bar + gap, Inserts: []Insert{{Occ: i}}})
	}
	hit := Summarise([]time.Duration{synthHit})
	echo := Summarise([]time.Duration{2 * synthLatency})
	f, ok := FitActivation(bs, hit, echo, 200*time.Microsecond)
	if !ok || !f.Resolved {
		t.Fatalf("not fitted/resolved: %+v", f)
	}
	if f.Immediate != 300-waited || f.Waited.N != waited {
		t.Errorf("immediate %d, waited %d; want %d and %d", f.Immediate, f.Waited.N, 300-waited, waited)
	}
	within(t, "waiting level", f.Waited.Median, R, 0.05)
}

package netsim

import (
	"strings"
	"testing"
	"time"
)

func TestParseUnits(t *testing.T) {
	rates := map[string]int64{
		"20mbit": 20_000_000, "1gbit": 1e9, "500kbit": 500_000, "100bit": 100,
		"1kibit": 1024, "1mbps": 8_000_000, "2.5Mbit": 2_500_000, "10kbps": 80_000,
	}
	for s, want := range rates {
		if got, err := ParseRate(s); err != nil || got != want {
			t.Errorf("ParseRate(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	sizes := map[string]int{
		"32kb": 32 << 10, "1514": 1514, "1514b": 1514, "2k": 2048, "1mb": 1 << 20, "8kbit": 1024,
	}
	for s, want := range sizes {
		if got, err := ParseSize(s); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	times := map[string]time.Duration{
		"50ms": 50 * time.Millisecond, "15msec": 15 * time.Millisecond, "200us": 200 * time.Microsecond,
		"1.5s": 1500 * time.Millisecond, "0ms": 0, "100ns": 100,
	}
	for s, want := range times {
		if got, err := ParseTime(s); err != nil || got != want {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	probs := map[string]float64{"1%": 0.01, "0.02": 0.02, "100%": 1, "0": 0}
	for s, want := range probs {
		if got, err := ParseProb(s); err != nil || got != want {
			t.Errorf("ParseProb(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
}

func TestParseUnitsErrorsNameTheBadPart(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{second(ParseRate("20")), `no unit`},
		{second(ParseRate("20xbit")), `unknown unit "xbit"`},
		{second(ParseRate("-1mbit")), `positive number`},
		{second(ParseSize("32kib")), `unknown unit "kib"`},
		{second(ParseSize("0")), `positive number`},
		{second(ParseTime("15")), `no unit`},
		{second(ParseTime("15min")), `unknown unit "min"`},
		{second(ParseProb("150%")), `want 0..1`},
		{second(ParseProb("lots")), `fraction`},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("error %v, want one containing %q", c.err, c.want)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func TestParseQdisc(t *testing.T) {
	q, err := ParseQdisc("tbf,rate=20mbit,burst=32kb,latency=50ms")
	if err != nil {
		t.Fatal(err)
	}
	tbf, ok := q.(*TBF)
	if !ok {
		t.Fatalf("%T, want *TBF", q)
	}
	// tc: limit = rate·latency + burst = 2.5 MB/s · 50 ms + 32 KiB.
	if want := 125_000 + 32<<10; tbf.Limit() != want {
		t.Errorf("tbf limit %d, want %d", tbf.Limit(), want)
	}
	if r, ok := QdiscRate(q); !ok || r != 20_000_000 {
		t.Errorf("QdiscRate = %d, %v", r, ok)
	}

	// droptail,limit=N holds N packets; limit=SIZE bytes.
	q, err = ParseQdisc("droptail,limit=2")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(0, 0)
	for i, want := range []Verdict{Queued, Queued, Dropped} {
		if v := q.Enqueue(&Packet{Len: 100}, now); v != want {
			t.Errorf("packet %d: %v, want %v", i, v, want)
		}
	}
	q, err = ParseQdisc("droptail,limit=1kb")
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []Verdict{Queued, Queued, Dropped} {
		if v := q.Enqueue(&Packet{Len: 500}, now); v != want {
			t.Errorf("byte-limited packet %d: %v, want %v", i, v, want)
		}
	}
	if q, err = ParseQdisc("droptail"); err != nil || q.(*DropTail).limitPkts != DefaultDropTailLimit {
		t.Errorf("droptail default: %v", err)
	}

	q, err = ParseQdisc("red,limit=400kb,min=30kb,max=90kb,probability=2%,avpkt=1000,burst=55,bandwidth=20mbit,ecn")
	if err != nil {
		t.Fatal(err)
	}
	red := q.(*RED)
	if !red.cfg.ECN || red.cfg.MaxP != 0.02 || red.cfg.Bandwidth != 20_000_000 || red.cfg.Burst != 55 {
		t.Errorf("red config %+v", red.cfg)
	}
	// ECN marks an ECT packet where RED would drop: with the average at
	// max (weight 1 makes it the backlog) every packet is marked.
	q, err = ParseQdisc("red,limit=10kb,min=1kb,max=2kb,avpkt=1000,burst=3,ecn")
	if err != nil {
		t.Fatal(err)
	}
	q.(*RED).w = 1
	marked := false
	for range 8 {
		if q.Enqueue(&Packet{Len: 1000, ECN: ECT0}, now) == Marked {
			marked = true
		}
	}
	if !marked {
		t.Error("red,ecn never marked an ECT packet above max")
	}

	q, err = ParseQdisc("police,rate=8mbit,burst=1500")
	if err != nil {
		t.Fatal(err)
	}
	if v := q.Enqueue(&Packet{Len: 1500}, now); v != Queued {
		t.Errorf("first packet: %v", v)
	}
	if v := q.Enqueue(&Packet{Len: 1500}, now); v != Dropped {
		t.Errorf("second packet at the same instant: %v, want dropped (bucket empty)", v)
	}
	// 1500 B at 8 Mbit/s is 1.5 ms of tokens.
	if v := q.Enqueue(&Packet{Len: 1500}, now.Add(1500*time.Microsecond)); v != Queued {
		t.Errorf("packet after a refill: %v", v)
	}
}

func TestParseQdiscErrors(t *testing.T) {
	for spec, want := range map[string]string{
		"":                                       "empty spec",
		"fq_codel":                               `unknown kind "fq_codel"`,
		"tbf,rate=20mbit,burst=32kb":             "exactly one of latency",
		"tbf,rate=20xbit,burst=32kb,latency=5ms": `rate: rate "20xbit": unknown unit "xbit"`,
		"tbf,burst=32kb,latency=5ms":             "tbf needs rate=RATE",
		"tbf,rate=1mbit,burst=32kb,latency=5ms,peakrate=2mbit": `unknown parameter "peakrate"`,
		"droptail,limit=0":                        "positive number of packets",
		"droptail,limit=64xb":                     `unknown unit "xb"`,
		"red,limit=10kb,min=5kb,max=2kb":          "want 0 < min < max",
		"red,limit=10kb,min=1kb,max=2kb,ecn=yes":  "ecn is a flag",
		"police,rate=1mbit":                       "police needs burst=SIZE",
		"tbf,,rate=1mbit":                         "empty parameter",
		"droptail,limit=1,limit=2":                "limit given twice",
		"prio":                                    "prio needs its queues in parentheses",
		"prio(droptail;tbf,rate=1mbit,burst=2kb)": "prio queue 1: tbf needs exactly one of latency",
		"prio(droptail;;droptail)":                "queue 1 is empty",
		"prio(droptail;prio(droptail))":           "cannot be a prio itself",
		"prio(droptail":                           "ending in ')'",
		"droptail;droptail":                       "only prio(Q0;Q1;...) takes a list",
	} {
		_, err := ParseQdisc(spec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseQdisc(%q) = %v, want an error containing %q", spec, err, want)
		}
	}
}

func TestParseLoss(t *testing.T) {
	m, err := ParseLoss("1%")
	if err != nil {
		t.Fatal(err)
	}
	if b, ok := m.(*Bernoulli); !ok || b.p != 0.01 {
		t.Fatalf("%T %+v", m, m)
	}
	lost := 0
	for range 100_000 {
		if m.Lose(nil) {
			lost++
		}
	}
	if lost < 800 || lost > 1200 { // 1000 expected, σ ≈ 31
		t.Errorf("1%% loss lost %d of 100000", lost)
	}
	m, err = ParseLoss("gemodel,p=1%,r=25%,seed=7")
	if err != nil {
		t.Fatal(err)
	}
	ge := m.(*GilbertElliott)
	if ge.c.P != 0.01 || ge.c.R != 0.25 || ge.c.LossBad != 1 || ge.c.LossGood != 0 || ge.c.Seed != 7 {
		t.Errorf("gemodel config %+v", ge.c)
	}
	if m, err := ParseLoss("gemodel,p=10%"); err != nil || m.(*GilbertElliott).c.R != 0.9 {
		t.Errorf("gemodel default r: %v", err)
	}
	for spec, want := range map[string]string{
		"150%":           "want 0..1",
		"bernoulli":      "needs p=",
		"gemodel,q=1%":   "needs p=",
		"gemodel,p=1%,x": `unknown parameter "x"`,
		"burst":          `unknown model "burst"`,
	} {
		_, err := ParseLoss(spec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseLoss(%q) = %v, want an error containing %q", spec, err, want)
		}
	}
}

func TestParsePrio(t *testing.T) {
	q, err := ParseQdisc("prio(tbf,rate=10mbit,burst=16kb,latency=50ms; droptail,limit=3)")
	if err != nil {
		t.Fatal(err)
	}
	mq, ok := q.(*MultiQueue)
	if !ok || mq.NumQueues() != 2 {
		t.Fatalf("got %T with %v queues, want a 2-queue MultiQueue", q, mq)
	}
	if _, ok := mq.Child(0).(*TBF); !ok {
		t.Errorf("queue 0 is %T, want *TBF", mq.Child(0))
	}
	dt, ok := mq.Child(1).(*DropTail)
	if !ok {
		t.Fatalf("queue 1 is %T, want *DropTail", mq.Child(1))
	}
	// The child is the one the spec says: a 3-packet limit.
	now := time.Unix(0, 0)
	for i := range 4 {
		v := mq.Enqueue(&Packet{Len: 100, Queue: 1}, now)
		if want := i >= 3; (v == Dropped) != want {
			t.Errorf("packet %d to queue 1: %v", i, v)
		}
	}
	if dt.Len() != 3 {
		t.Errorf("queue 1 holds %d, want 3", dt.Len())
	}
	if _, ok := QdiscRate(mq); ok {
		t.Error("QdiscRate of a prio with an unshaped queue: want none")
	}
	shaped, err := ParseQdisc("prio(tbf,rate=10mbit,burst=16kb,latency=50ms;police,rate=5mbit,burst=8kb)")
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := QdiscRate(shaped); !ok || r != 15_000_000 {
		t.Errorf("QdiscRate of two shaped queues = %d, %v; want their sum 15000000", r, ok)
	}
}

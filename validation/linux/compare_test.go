package linux

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

func TestRatioAndWithin(t *testing.T) {
	for _, c := range []struct {
		ours, linux float64
		ok          bool
	}{
		{9.6, 9.6, true}, {9.6, 8.4, true}, {9.6, 8.3, false}, {7, 8, true}, {6.7, 8, false}, {0, 0, true}, {1, 0, false},
	} {
		if got := Within(c.ours, c.linux, Tolerance); got != c.ok {
			t.Errorf("Within(%v, %v) = %v, want %v (ratio %v)", c.ours, c.linux, got, c.ok, Ratio(c.ours, c.linux))
		}
	}
	if !math.IsNaN(Ratio(1, 0)) {
		t.Errorf("Ratio(1, 0) = %v, want NaN", Ratio(1, 0))
	}
	// Small counts agree whatever their ratio; above, the ratio decides.
	if !RetransAgree(0, SmallRetrans, Tolerance) || RetransAgree(0, SmallRetrans+1, Tolerance) || !RetransAgree(100, 88, Tolerance) || RetransAgree(100, 80, Tolerance) {
		t.Error("RetransAgree disagrees with its contract")
	}
	// Recoveries: one apart always agrees; two apart only within ±15 %.
	if !RecoveriesAgree(1, 2, Tolerance) || RecoveriesAgree(8, 10, Tolerance) || !RecoveriesAgree(13, 15, Tolerance) || !RecoveriesAgree(12, 13, Tolerance) {
		t.Error("RecoveriesAgree disagrees with its contract")
	}
}

func TestTableListsEveryMiss(t *testing.T) {
	c := Cell{CC: "reno", Flows: 2, Rate: 10e6, RTT: 20 * time.Millisecond, Duration: time.Second}
	anchor := Side{Goodput0: 4.6, Aggregate: 9.3, Retrans: 66}
	rows := []Row{
		{Cell: c, Ours: Side{Goodput0: 4.8, Aggregate: 9.6, Retrans: 70, Streams: []float64{4.8, 4.8}},
			Linux: Side{Goodput0: 4.7, Aggregate: 9.5, Retrans: 75, Streams: []float64{4.7, 4.8}}, Anchor: &anchor},
		{Cell: c, Ours: Side{Goodput0: 4.8, Aggregate: 9.6, Retrans: 70, Timeouts: 3},
			Linux: Side{Goodput0: 3.0, Aggregate: 7.6, Retrans: 200, Drops: 120, Recoveries: 9, HyStartCwnd: 49.5}, Anchor: &anchor},
	}
	if m := rows[0].Misses(Tolerance); len(m) != 0 {
		t.Errorf("row 0 misses %v, want none", m)
	}
	if m := strings.Join(rows[1].Misses(Tolerance), ","); m != "goodput0,aggregate,retrans" {
		t.Errorf("row 1 misses %q", m)
	}
	var b bytes.Buffer
	WriteTable(&b, rows, Tolerance)
	out := b.String()
	for _, want := range []string{
		"| 2× reno 10 Mbit/s 20ms q17 | 4.80 / 4.70 | 1.02 |", "| ok |",
		"miss: goodput0, aggregate, retrans", "1 of 2 cells within ±15 %", "2 within ±15 % of Linux through the kernel's tbf",
		"our RTOs 3", "recoveries ours 0 / Linux 9", "HyStart ended slow start at cwnd 50", "Linux retransmits 80 more than the switch dropped", "Linux at 76 % of the link",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "\n* "); n != 1 {
		t.Errorf("%d misses listed, want 1:\n%s", n, out)
	}
}

func TestEmuAndTBF(t *testing.T) {
	c := Cell{CC: "cubic", Flows: 1, Rate: 50e6, RTT: 80 * time.Millisecond, Duration: time.Second}
	e := Emu(c, false)
	if e.Right.Qdisc != "droptail,limit=333" || e.Right.Rate != "50000000bit" || e.Right.Delay != "40000us,limit=4mb" {
		t.Errorf("data port %+v", e.Right)
	}
	if e.Left.Qdisc != "droptail,limit=1000" || e.Left.Delay != e.Right.Delay {
		t.Errorf("ACK port %+v", e.Left)
	}
	k := Emu(c, true)
	if k.Right.Qdisc != "" || k.Right.Rate != "" || k.Right.Delay != e.Right.Delay || k.Left != e.Left {
		t.Errorf("kernel mode %+v", k)
	}
	if got := strings.Join(TBFArgs(c), " "); got != "rate 50000000bit burst 12500 limit 504162" {
		t.Errorf("tbf %q", got)
	}
}

// The simulator's side is deterministic for a seed and reports what the
// dumbbell measured: flow goodputs that add up, under the link's rate.
func TestSimDeterministic(t *testing.T) {
	c := Cell{CC: "reno", Flows: 2, Rate: 10e6, RTT: 20 * time.Millisecond, Duration: 3 * time.Second}
	a, err := Sim(c, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Sim(c, 1)
	if err != nil {
		t.Fatal(err)
	}
	if a.Aggregate != b.Aggregate || a.Retrans != b.Retrans || a.Recoveries != b.Recoveries || a.Goodput0 != b.Goodput0 {
		t.Errorf("two runs differ: %+v / %+v", a, b)
	}
	if len(a.Streams) != 2 || math.Abs(a.Streams[0]+a.Streams[1]-a.Aggregate) > 1e-9 || a.Goodput0 != a.Streams[0] {
		t.Errorf("streams %v, aggregate %v, goodput0 %v", a.Streams, a.Aggregate, a.Goodput0)
	}
	if a.Recoveries == 0 || a.Recoveries > a.Retrans {
		t.Errorf("%d recoveries for %d retransmissions: each recovery retransmits at least once", a.Recoveries, a.Retrans)
	}
	if a.Aggregate <= 0 || a.Aggregate > 10 {
		t.Errorf("aggregate %v Mbit/s on a 10 Mbit/s link", a.Aggregate)
	}
	if _, err := Sim(Cell{CC: "reno", Rate: 10e6, RTT: time.Millisecond, Duration: time.Second}, 1); err == nil {
		t.Error("a cell of 0 flows ran")
	}
}

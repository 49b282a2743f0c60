package cc

import (
	"math"
	"testing"
	"time"
)

// RFC 3649 §5: b(w) interpolates 0.5 → 0.1 in log w between Low_Window
// 38 and High_Window 83000, and a(w) = w²·p(w)·2b(w)/(2−b(w)) with the
// response function p(w) = 0.078/w^1.2.
func rfc3649B(w float64) float64 {
	return (0.1-0.5)*(math.Log(w)-math.Log(38))/(math.Log(83000)-math.Log(38)) + 0.5
}

func rfc3649A(w float64) float64 {
	p := 0.078 / math.Pow(w, 1.2)
	b := rfc3649B(w)
	return w * w * p * 2 * b / (2 - b)
}

// At every table point the kernel's step function gives the RFC's a(w)
// and b(w): a(w) measured as growth over one RTT, b(w) as the cut.
func TestHighSpeedTablePoints(t *testing.T) {
	if testing.Short() {
		t.Skip("long single-goroutine simulation: the race phase (-short) leaves it to the integration phase")
	}
	for i, e := range hstcpAIMD {
		if i == 0 {
			continue // w ≤ 38 is Reno
		}
		// a(w): growth per RTT over 10 RTTs from the start of the step.
		w := hstcpAIMD[i-1].cwnd + 1
		p := newPipe(t, "highspeed", w)
		p.c.Ssthresh = 2
		for range 10 {
			p.round(100 * time.Millisecond)
		}
		if got := float64(p.c.Cwnd-w) / 10; math.Abs(got-float64(i+1)) > 0.21 {
			t.Fatalf("w %d: grew %.1f per RTT, want a(w) = %d", w, got, i+1)
		}
		if math.Abs(rfc3649A(float64(e.cwnd))-float64(i+1)) > 0.06 {
			t.Fatalf("table point %d: RFC a(w) %.3f, table %d", e.cwnd, rfc3649A(float64(e.cwnd)), i+1)
		}
		// b(w): the cut at the table point.
		q := newPipe(t, "highspeed", e.cwnd)
		q.c.Ssthresh = 2
		q.a.CongAvoid(q.c, 1) // settle the index at this window
		q.c.Cwnd = e.cwnd
		cut := 1 - float64(q.a.SSThresh(q.c))/float64(e.cwnd)
		// b is stored ×256 (±0.004) and the product truncates (1/w).
		if math.Abs(cut-rfc3649B(float64(e.cwnd))) > 0.005+1/float64(e.cwnd) {
			t.Fatalf("w %d: cut %.4f, RFC b(w) %.4f", e.cwnd, cut, rfc3649B(float64(e.cwnd)))
		}
	}
}

func TestHighSpeedIsRenoAtSmallWindows(t *testing.T) {
	p := newPipe(t, "highspeed", 30)
	p.c.Ssthresh = 2
	for range 30 {
		p.a.CongAvoid(p.c, 1)
	}
	if p.c.Cwnd != 31 {
		t.Fatalf("cwnd %d after one RTT at 30, want Reno's 31", p.c.Cwnd)
	}
	if got := p.a.SSThresh(p.c); got != 16 {
		t.Fatalf("ssthresh %d at 31, want half (16)", got)
	}
	// The index follows the window down again after a cut.
	p.c.Cwnd = 5000
	p.a.CongAvoid(p.c, 1)
	p.c.Cwnd = 100
	p.a.CongAvoid(p.c, 1)
	if p.a.(*HighSpeed).ai != 1 {
		t.Fatalf("index %d at w 100, want 1", p.a.(*HighSpeed).ai)
	}
}

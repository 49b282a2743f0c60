package probes

import (
	"math"
	"slices"
	"testing"
	"time"
)

func TestBinOfBerkeleySYNEdges(t *testing.T) {
	edges := Bins(Berkeley(), KindSYN)
	tests := []struct {
		rtt  time.Duration
		want int
	}{
		{0, 0},
		{50 * time.Microsecond, 0},
		{5800*time.Millisecond - 1, 0},
		{5800 * time.Millisecond, 1}, // exactly on the edge: the timer fired, one retransmission
		{5800*time.Millisecond + 1, 1},
		{24*time.Second - 1, 1},
		{24 * time.Second, 2},
		{75*time.Second - 1, 2},
		{75 * time.Second, 3}, // connection fails
		{105510 * time.Millisecond, 3},
		{time.Duration(math.MaxInt64), 3},
	}
	for _, tc := range tests {
		if got := BinOf(tc.rtt, edges); got != tc.want {
			t.Errorf("BinOf(%v) = %d, want %d", tc.rtt, got, tc.want)
		}
	}
}

func TestBinOfDegenerateEdges(t *testing.T) {
	// Equal edges (never produced by a valid profile) must not panic and
	// must put an on-edge value above all of them.
	if got := BinOf(2, []time.Duration{1, 2, 2, 3}); got != 3 {
		t.Fatalf("BinOf = %d, want 3", got)
	}
}

func TestClassifyPaperShares(t *testing.T) {
	// Rebuild the paper's L=3500, 5000 pps shares (20.4 / 0 / 60 / 19.6 %)
	// from 250 synthetic RTTs: 51 fast, 150 in [24,75), 49 beyond 75 s.
	var rtts []time.Duration
	for range 51 {
		rtts = append(rtts, 3*time.Second)
	}
	for i := range 150 {
		rtts = append(rtts, 24*time.Second+time.Duration(i)*300*time.Millisecond)
	}
	for range 49 {
		rtts = append(rtts, 105510*time.Millisecond)
	}
	edges := Bins(Berkeley(), KindSYN)
	counts := Count(rtts, edges)
	if !slices.Equal(counts, []int{51, 0, 150, 49}) {
		t.Fatalf("counts = %v", counts)
	}
	shares := Classify(rtts, edges)
	want := []float64{0.204, 0, 0.6, 0.196}
	for i := range want {
		if math.Abs(shares[i]-want[i]) > 1e-12 {
			t.Fatalf("shares = %v, want %v", shares, want)
		}
	}
}

func TestClassifyEmpty(t *testing.T) {
	got := Classify(nil, Bins(Berkeley(), KindSYN))
	if !slices.Equal(got, []float64{0, 0, 0, 0}) {
		t.Fatalf("Classify(nil) = %v", got)
	}
}

func TestRetransmissions(t *testing.T) {
	tests := []struct {
		p          TimerProfile
		k          Kind
		rtt        time.Duration
		wantN      int
		wantFailed bool
	}{
		{Berkeley(), KindSYN, 5 * time.Second, 0, false},
		{Berkeley(), KindSYN, 5800 * time.Millisecond, 1, false},
		{Berkeley(), KindSYN, 30 * time.Second, 2, false},
		{Berkeley(), KindSYN, 75 * time.Second, 2, true},
		{Berkeley(), KindData, 1499 * time.Millisecond, 0, false},
		{Berkeley(), KindData, 1500 * time.Millisecond, 1, false}, // "> 1.5 s: retransmitted at least once"
		{Berkeley(), KindData, 4 * time.Second, 1, false},
		{Berkeley(), KindData, 75 * time.Second, 5, false}, // after 46.5, before 94.5
		{Berkeley(), KindData, 600 * time.Second, 12, true},
		{Linux(), KindSYN, 2 * time.Second, 1, false},
		{Linux(), KindSYN, 63 * time.Second, 6, false},
		{Linux(), KindSYN, 127 * time.Second, 6, true},
		{Linux(), KindData, 999 * time.Millisecond, 0, false},
	}
	for _, tc := range tests {
		n, failed := Retransmissions(tc.p, tc.k, tc.rtt)
		if n != tc.wantN || failed != tc.wantFailed {
			t.Errorf("%s %s %v: got (%d, %v), want (%d, %v)", tc.p.Name, tc.k, tc.rtt, n, failed, tc.wantN, tc.wantFailed)
		}
	}
}

func TestBinLabels(t *testing.T) {
	got := BinLabels(Bins(Berkeley(), KindSYN))
	want := []string{"[0s,5.8s)", "[5.8s,24s)", "[24s,1m15s)", "[1m15s,inf)"}
	if !slices.Equal(got, want) {
		t.Fatalf("labels = %q, want %q", got, want)
	}
}

func TestRTTBuckets(t *testing.T) {
	b := RTTBuckets(Berkeley(), Linux())
	if b[0] != 50e-6 || b[len(b)-1] != 200 {
		t.Fatalf("buckets span %v..%v, want 50µs..200s", b[0], b[len(b)-1])
	}
	if !slices.IsSorted(b) || len(slices.Compact(slices.Clone(b))) != len(b) {
		t.Fatalf("buckets not strictly increasing: %v", b)
	}
	for _, edge := range []float64{5.8, 24, 75, 1.5, 4.5, 10.5, 1, 3, 7, 127, 158.5} {
		if !slices.Contains(b, edge) {
			t.Errorf("timer edge %vs missing from buckets %v", edge, b)
		}
	}
	for _, scale := range []float64{1e-4, 2e-4, 5e-4, 1e-3, 0.5, 2, 5, 20, 50, 100} {
		if !slices.ContainsFunc(b, func(v float64) bool { return math.Abs(v-scale) < 1e-12 }) {
			t.Errorf("1-2-5 step %v missing", scale)
		}
	}
	if slices.Contains(b, 222.5) {
		t.Error("edges above 200 s must be left out")
	}
}

func TestCountResultsPutsUnansweredLast(t *testing.T) {
	rs := []Result{
		{Answered: true, RTT: time.Second},
		{Answered: true, RTT: 30 * time.Second},
		{Answered: false},
		{Answered: true, RTT: 90 * time.Second},
	}
	edges := Bins(Berkeley(), KindSYN)
	if got := CountResults(rs, edges); !slices.Equal(got, []int{1, 0, 1, 2}) {
		t.Fatalf("CountResults = %v", got)
	}
	if got := ClassifyResults(rs, edges); !slices.Equal(got, []float64{0.25, 0, 0.25, 0.5}) {
		t.Fatalf("ClassifyResults = %v", got)
	}
}

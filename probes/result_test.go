package probes

import (
	"testing"
	"time"
)

func ms(vs ...int) []time.Duration {
	out := make([]time.Duration, len(vs))
	for i, v := range vs {
		out[i] = time.Duration(v) * time.Millisecond
	}
	return out
}

func TestSummarizeRTTs(t *testing.T) {
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(100-i) * time.Millisecond // 100..1, unsorted
	}
	tests := []struct {
		name string
		in   []time.Duration
		want Summary
	}{
		{"empty", nil, Summary{}},
		{"one", ms(7), Summary{Probes: 1, Answered: 1, Min: 7e6, Max: 7e6, Mean: 7e6, Median: 7e6, P50: 7e6, P90: 7e6, P99: 7e6}},
		{"even count median averages", ms(4, 1, 3, 2), Summary{Probes: 4, Answered: 4,
			Min: 1e6, Max: 4e6, Mean: 2500e3, Median: 2500e3, P50: 2e6, P90: 4e6, P99: 4e6}},
		{"1..100 ms", hundred, Summary{Probes: 100, Answered: 100,
			Min: 1e6, Max: 100e6, Mean: 50500e3, Median: 50500e3, P50: 50e6, P90: 90e6, P99: 99e6}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := append([]time.Duration(nil), tc.in...)
			if got := SummarizeRTTs(tc.in); got != tc.want {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
			for i := range before {
				if before[i] != tc.in[i] {
					t.Fatal("SummarizeRTTs reordered its input")
				}
			}
		})
	}
}

func TestSummarizeCountsUnanswered(t *testing.T) {
	rs := []Result{
		{Answered: true, RTT: time.Second},
		{Answered: false, RTT: 0},
		{Answered: true, RTT: 3 * time.Second},
	}
	s := Summarize(rs)
	if s.Probes != 3 || s.Answered != 2 || s.Unanswered != 1 || s.Mean != 2*time.Second || s.Min != time.Second {
		t.Fatalf("Summary = %+v", s)
	}
}

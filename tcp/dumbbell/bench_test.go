package dumbbell

import (
	"testing"
	"time"
)

// BenchmarkDumbbell is the comparison scenario: 2 NewReno flows,
// 10 Mbit/s, 40 ms RTT, DropTail of 100 packets, 30 simulated seconds.
// ns-3 3.37 takes about 325 000 events and 3.6 CPU-seconds for it (the
// issue's figure, not measured here). Each b.N is one whole run.
func BenchmarkDumbbell(b *testing.B) {
	c := Config{Flows: 2, CC: []string{"newreno"}, Bottleneck: 10_000_000, RTT: 40 * time.Millisecond,
		Queue: 100, Duration: 30 * time.Second, DelAck: true, Seed: 1}
	benchRuns(b, c)
}

// BenchmarkBulk1G is one CUBIC flow at 1 Gbit/s (20 ms RTT, a BDP of
// DropTail queue) for 5 simulated seconds: the simulator's events per
// second on a fast bulk flow.
func BenchmarkBulk1G(b *testing.B) {
	c := Config{Flows: 1, CC: []string{"cubic"}, Bottleneck: 1_000_000_000, Access: 10_000_000_000,
		RTT: 20 * time.Millisecond, Queue: 1700, Duration: 5 * time.Second, DelAck: true, Seed: 1}
	benchRuns(b, c)
}

func benchRuns(b *testing.B, c Config) {
	b.ReportAllocs()
	var events uint64
	var util float64
	for b.Loop() {
		r, err := Run(c)
		if err != nil {
			b.Fatal(err)
		}
		events += r.Events
		util = r.Utilisation
	}
	s := b.Elapsed().Seconds()
	b.ReportMetric(float64(events)/s, "events/s")
	b.ReportMetric(float64(events)/float64(b.N), "events/run")
	b.ReportMetric(s/float64(b.N)*1e3, "wall-ms/run")
	b.ReportMetric(util, "utilisation")
}

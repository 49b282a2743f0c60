package highbdp

import (
	"testing"
)

// BenchmarkCell is one high-bdp-ci cell (10G/50: 200 Mbit/s for 72 s,
// ns-2 NewReno): the simulator's speed on this workload, reported as
// events/s and simulated seconds per wall second (docs/high-bdp.md).
func BenchmarkCell(b *testing.B) {
	s, err := LoadSpec(SpecNameCI)
	if err != nil {
		b.Fatal(err)
	}
	sc, err := s.Scenario(Cell{Kind: "grid", Bottleneck: "10G", CC: NS2Reno, Seed: 1, Buffer: s.Buffer, DelAck: true})
	if err != nil {
		b.Fatal(err)
	}
	var events uint64
	var wall, cpu float64
	for b.Loop() {
		o, err := sc.Run()
		if err != nil {
			b.Fatal(err)
		}
		events += o.Events
		wall += o.WallS
		cpu += o.CPUS
	}
	b.ReportMetric(float64(events)/wall, "events/s")
	b.ReportMetric(sc.Duration.Seconds()*float64(b.N)/wall, "sim-s/wall-s")
	// Per CPU second: what the simulator does when it has a core.
	b.ReportMetric(float64(events)/cpu, "events/cpu-s")
	b.ReportMetric(sc.Duration.Seconds()*float64(b.N)/cpu, "sim-s/cpu-s")
}

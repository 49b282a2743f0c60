package sim

import (
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/probes"
	"github.com/pseudocong/pseudocong/profile"
)

// BenchmarkRun is one paper-000 handshake cell (250 SYNs at 1 000 pps on
// 2 000 base rules) and one packet_in cell (400 flows at 5 000 pps): the
// simulator's own cost per run, outputs aside.
func BenchmarkRun(b *testing.B) {
	prof, err := profile.Load("pica8-p3297")
	if err != nil {
		b.Fatal(err)
	}
	for _, sc := range []struct {
		name string
		sc   Scenario
	}{
		{"handshake", Scenario{Kind: Handshake, Flows: 250, Rate: 1000, BaseLoad: 2000, Priority: "ascending"}},
		{"packet_in", Scenario{Kind: OneWay, Flows: 400, Rate: 5000, Priority: "constant"}},
	} {
		s := sc.sc
		s.Profile, s.ControllerService, s.LinkLatency, s.Timers, s.Seed = prof, 1950*time.Microsecond, time.Microsecond, probes.Berkeley(), 1
		b.Run(sc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Run(s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

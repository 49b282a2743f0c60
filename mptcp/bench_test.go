package mptcp

import (
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/tcp/dumbbell"
)

// BenchmarkRun is one 20 s cell of the mptcp spec (80/40 ms, 1 %/4 %,
// 64 KB, RTX-DLCS); its peer, BenchmarkPeerDumbbellOneFlow, is one plain
// TCP flow of package tcp/dumbbell for 20 s on a 5 Mbit/s, 160 ms-RTT
// bottleneck: what the MPTCP layer costs over the endpoint it is built on
// shows as the gap in ns/event.
func BenchmarkRun(b *testing.B) {
	cfg := RunConfig{Paths: twoPaths(80*ms, 40*ms, 0.01, 0.04), RcvBuf: 64 << 10, Policy: "rtx-dlcs",
		Duration: 20 * time.Second, Warmup: time.Second, Seed: 1, Profile: "ns3", NoSACK: true}
	var events uint64
	b.ReportAllocs()
	for b.Loop() {
		r, err := Run(cfg)
		if err != nil {
			b.Fatal(err)
		}
		events += r.Events
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
}

func BenchmarkPeerDumbbellOneFlow(b *testing.B) {
	cfg := dumbbell.Config{Flows: 1, Bottleneck: 5e6, RTT: 160 * time.Millisecond, Queue: 100, Duration: 20 * time.Second, Seed: 1}
	var events uint64
	b.ReportAllocs()
	for b.Loop() {
		r, err := dumbbell.Run(cfg)
		if err != nil {
			b.Fatal(err)
		}
		events += r.Events
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
}

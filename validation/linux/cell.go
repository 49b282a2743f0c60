// Package linux validates our simulated TCP against real Linux TCP (issue
// 10 item 6): the same dumbbell run live — kernel TCP on two
// network-namespace hosts, iperf3 as the source, one `pseudocong switch`
// as the bottleneck whose ports emulate it (droptail queue, line rate,
// delay line) — and in our simulator (tcp/dumbbell) configured as close
// to Linux as it goes. A Row puts the two side by side: goodput of flow 0
// and of all flows, and retransmitted segments, each with the issue's
// ±15 % verdict.
//
// The live side leaves Linux's TCP as Linux has it (initial window 10,
// SACK, timestamps, window scaling, quick-ack then delayed ACKs, RACK,
// TLP, F-RTO, HyStart for CUBIC, internal pacing for BBR, autotuned
// buffers); the simulator matches what it models of that (tcp.Linux()
// timers, the segment size the live path's MTU gives, the same queue in
// packets) and cannot match the rest (no RACK/TLP in our sender): see
// docs/tcp-validation.md, "Against Linux".
package linux

import (
	"fmt"
	"math"
	"time"
)

// Cell is one dumbbell: Flows bulk flows of one algorithm through a
// bottleneck of Rate bit/s whose forward queue holds Queue packets, base
// round trip RTT, for Duration.
type Cell struct {
	CC       string
	Flows    int
	Rate     int64 // bit/s
	RTT      time.Duration
	Queue    int // packets; 0: one BDP of 1500-byte packets (BDPQueue)
	Duration time.Duration
}

// Key names a cell ("2× cubic 10 Mbit/s 20ms q17").
func (c Cell) Key() string {
	return fmt.Sprintf("%d× %s %g Mbit/s %v q%d", c.Flows, c.CC, float64(c.Rate)/1e6, c.RTT, c.queue())
}

func (c Cell) queue() int {
	if c.Queue > 0 {
		return c.Queue
	}
	return BDPQueue(c.Rate, c.RTT)
}

// BDPQueue is one bandwidth-delay product in 1500-byte packets, at least
// 4 (the ns-3 comparison's queue).
func BDPQueue(rate int64, rtt time.Duration) int {
	return max(int(math.Round(float64(rate)*rtt.Seconds()/8/1500)), 4)
}

func (c Cell) check() error {
	switch {
	case c.Flows < 1:
		return fmt.Errorf("linux: cell %s: want at least one flow", c.Key())
	case c.Rate <= 0 || c.RTT <= 0 || c.Duration <= 0:
		return fmt.Errorf("linux: cell %s: rate, rtt and duration must be positive", c.Key())
	}
	return nil
}

// Grid is the cross product of the lists, in that order of nesting
// (settings outermost, so a live run reconfigures the switch only when
// the setting changes).
func Grid(ccs []string, flows []int, settings []Setting, d time.Duration) []Cell {
	var out []Cell
	for _, s := range settings {
		for _, c := range ccs {
			for _, f := range flows {
				out = append(out, Cell{CC: c, Flows: f, Rate: s.Rate, RTT: s.RTT, Queue: s.Queue, Duration: d})
			}
		}
	}
	return out
}

// Setting is a bottleneck: rate, base RTT, forward queue (0: one BDP).
type Setting struct {
	Rate  int64
	RTT   time.Duration
	Queue int
}

func (s Setting) String() string {
	return fmt.Sprintf("%g Mbit/s %v", float64(s.Rate)/1e6, s.RTT)
}

// Side is one side's measurement of a cell.
type Side struct {
	// Goodput0 is flow 0's goodput, Aggregate all flows' together
	// (Mbit/s, in-order bytes at the receivers over the run).
	Goodput0, Aggregate float64
	// Retrans is every flow's retransmitted segments over the whole run
	// (slow start included): TcpRetransSegs live, Stats.RetransSegs ours.
	Retrans uint64
	// Drops is the bottleneck queue's drops (ours: the qdisc's; live: the
	// switch's drop counters over the run).
	Drops uint64
	// Recoveries is every flow's fast recoveries (loss episodes, each one
	// window reduction): TcpExtTCPSackRecovery + TCPRenoRecovery live,
	// the Stats of the same names ours.
	Recoveries uint64
	// Timeouts is RTO expiries (ours only; live: not measured).
	Timeouts uint64
	// HyStartCwnd is the mean window, in segments, at which CUBIC's
	// HyStart ended the flows' slow starts (live only: the kernel's
	// TcpExtTCPHystart* counters); 0 if it never did.
	HyStartCwnd float64
	// Streams is each flow's goodput.
	Streams []float64
}

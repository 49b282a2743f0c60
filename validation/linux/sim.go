package linux

import (
	"fmt"
	"time"

	"github.com/pseudocong/pseudocong/tcp"
	"github.com/pseudocong/pseudocong/tcp/dumbbell"
)

// LinuxSegment is the payload of a full segment on the live path: a
// 1500-byte veth MTU less 20 (IP), 20 (TCP) and 12 (timestamps) bytes.
// Live checks the namespace's MTU against it.
const LinuxSegment = 1448

// SimStartGap is the time between our flows' starts: iperf3 -P opens its
// streams one after the other and starts them all at once when the last
// is up, so the live flows start together; ours start this far apart
// (dumbbell needs a gap above zero).
const SimStartGap = time.Millisecond

// SimConfig is the dumbbell of our simulator matched to the live one as
// far as it models Linux: tcp.Linux() timers (RTO min 200 ms on the
// variance term, delayed ACKs after two segments or 40 ms, 16 quick ACKs,
// initial window 10), SACK, timestamps, window scaling, F-RTO, pacing for
// BBR, 4 MiB buffers (Linux's tcp_wmem maximum; tcp_rmem's is 6 MiB,
// more than any cell here needs), the live segment size, the same
// droptail queue in packets, RTT/2 of delay each way, ACKs through a
// queue of at least 1000 packets at the bottleneck rate (the switch's
// port towards the client). Access links are 1 Gbit/s (live: veths and
// the switch, faster).
//
// Our links carry IP datagrams, the live ones Ethernet frames 14 bytes
// longer, which the switch's shaper (and tbf) count: ours runs at the
// rate that gives a full segment the same time on the wire (SimRate).
func SimConfig(c Cell, seed uint64) dumbbell.Config {
	return dumbbell.Config{
		Flows: c.Flows, CC: []string{c.CC}, Bottleneck: SimRate(c.Rate), RTT: c.RTT, Queue: c.queue(),
		Qdisc: "droptail", Duration: c.Duration, Segment: LinuxSegment, DelAck: true,
		Profile: tcp.Linux(), Seed: seed, StartGap: SimStartGap,
	}
}

// SimRate is the live line rate scaled by a full datagram over its
// frame (1500 / 1514 bytes).
func SimRate(rate int64) int64 {
	return rate * (LinuxSegment + 52) / (LinuxSegment + 52 + 14)
}

// Sim runs a cell in our simulator (deterministic for a seed).
func Sim(c Cell, seed uint64) (Side, error) {
	if err := c.check(); err != nil {
		return Side{}, err
	}
	r, err := dumbbell.Run(SimConfig(c, seed))
	if err != nil {
		return Side{}, fmt.Errorf("linux: sim %s: %w", c.Key(), err)
	}
	s := Side{Drops: r.BottleneckDrops}
	for i, f := range r.Flows {
		if i == 0 {
			s.Goodput0 = f.GoodputMbps
		}
		s.Aggregate += f.GoodputMbps
		s.Retrans += f.Retransmits
		s.Recoveries += f.Stats.TCPSackRecovery + f.Stats.TCPRenoRecovery
		s.Timeouts += f.Timeouts
		s.Streams = append(s.Streams, f.GoodputMbps)
	}
	return s, nil
}

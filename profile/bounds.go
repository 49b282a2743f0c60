package profile

import (
	"fmt"
	"math"
	"time"
)

// Bounds on every numeric profile value. A profile is user input: a value
// far outside what any switch does is a typo or a unit slip, and some of
// them would otherwise crash the process (the agent preallocates its batch
// buffer: batch_size 1e9 ran out of memory, 1e15 panicked in makeslice) or
// overflow the virtual clock. Each bound is generous (orders of magnitude
// beyond the calibrated pica8-p3297) and says why it is there; the error
// names the key, its value and the allowed range.
const (
	// MaxTCAMCapacity bounds tcam.capacity. The model allocates every slot
	// up front (about 160 B each with its index), so 2^20 slots are
	// ~170 MB per simulated switch, and a sim run has one per worker. Real
	// TCAMs hold thousands to a few hundred thousand entries
	// (pica8-p3297: 4 000).
	MaxTCAMCapacity = 1 << 20
	// MaxBackingCapacity bounds backing_table.capacity: 4 Mi rules of a
	// few hundred bytes each is a GB-scale table when full; switches keep
	// tens of thousands (pica8-p3297: 65 536).
	MaxBackingCapacity = 1 << 22
	// MaxBatchSize bounds agent.batch_size. The agent preallocates one
	// batch buffer (~104 B per Packet-In), so this caps it near 7 MB;
	// switches batch tens (pica8-p3297: 25).
	MaxBatchSize = 1 << 16
	// MaxQueueLimit bounds agent.miss_queue_limit, agent.job_queue_limit
	// and agent.controller_burst_limit. The queues grow on demand, so a
	// full one holds at most ~100 MB; switches queue thousands.
	MaxQueueLimit = 1_000_000
	// MaxRateLimit bounds agent.controller_rate_limit (Packet-Ins per
	// second; 0 = none). OVS's default is 1 000/s and no switch CPU builds
	// more than a million Packet-Ins a second.
	MaxRateLimit = 1_000_000
	// MaxOpCost bounds the per-operation CPU costs (agent.packet_in_cost,
	// tcam.timing.driver_per_*), forwarding.hit_delay,
	// install.activation_delay and the upcall latencies. The measured
	// costs are microseconds to milliseconds (pica8-p3297: 4.2 ms per
	// Packet-In); a second per operation is already absurd, and a run of
	// millions of operations must stay far inside time.Duration's 292
	// years of virtual time.
	MaxOpCost = time.Second
	// MaxFlushPeriod bounds agent.flush_period: a partial batch waiting a
	// minute is already longer than TCP's 75 s give-up (pica8-p3297: 120 ms).
	MaxFlushPeriod = time.Minute
	// MaxChannelLatency bounds controller_channel.latency (one way): a
	// controller across the planet is ~150 ms away.
	MaxChannelLatency = 10 * time.Second
	// MinClockHz and MaxClockHz bound tcam.timing.clock_hz: switch chips
	// run at hundreds of MHz; outside 1 MHz..100 GHz the chip time of an
	// operation (cycles / clock) is nonsense.
	MinClockHz = 1e6
	MaxClockHz = 1e11
	// MaxCyclesPerOp bounds tcam.timing.cycles_per_*: a chip operation
	// takes a few cycles; a million is a second at the lowest clock.
	MaxCyclesPerOp = 1_000_000
)

// checkBounds reports every numeric value outside its bound, one error
// per key. section reports whether any key of the agent or of the TCAM
// timing failed, so Validate can skip those components' own checks
// (they would repeat the same key).
func (p *Profile) checkBounds() (errs []error, agentBad, timingBad bool) {
	b := &bounds{}
	a := p.Agent
	b.dur("agent.packet_in_cost", a.PacketInCost, 0, MaxOpCost, "CPU time per Packet-In; pica8-p3297: 4.2ms")
	b.int("agent.batch_size", int64(a.BatchSize), 1, MaxBatchSize, "the batch buffer is preallocated; pica8-p3297: 25")
	b.dur("agent.flush_period", a.FlushPeriod, 0, MaxFlushPeriod, "pica8-p3297: 120ms")
	b.int("agent.miss_queue_limit", int64(a.MissQueueLimit), 1, MaxQueueLimit, "every queue is bounded; pica8-p3297: 1024")
	b.int("agent.job_queue_limit", int64(a.JobQueueLimit), 1, MaxQueueLimit, "every queue is bounded; pica8-p3297: 4096")
	b.float("agent.controller_rate_limit", a.RateLimit, 0, MaxRateLimit, "Packet-Ins per second, 0 = no limit")
	b.int("agent.controller_burst_limit", int64(a.BurstLimit), 0, MaxQueueLimit, "token bucket depth and queue bound, 0 = rate/4")
	agentBad = len(b.errs) > 0

	b.int("tcam.capacity", int64(p.TCAM.Capacity), 1, MaxTCAMCapacity, "every slot is allocated up front; pica8-p3297: 4000")
	n := len(b.errs)
	tm := p.TCAM.Timing
	b.float("tcam.timing.clock_hz", tm.ClockHz, MinClockHz, MaxClockHz, "switch chips run at hundreds of MHz")
	for _, c := range []struct {
		key string
		v   int64
	}{
		{"tcam.timing.cycles_per_lookup", tm.CyclesPerLookup},
		{"tcam.timing.cycles_per_write", tm.CyclesPerWrite},
		{"tcam.timing.cycles_per_read", tm.CyclesPerRead},
		{"tcam.timing.cycles_per_invalidate", tm.CyclesPerInvalidate},
	} {
		b.int(c.key, c.v, 0, MaxCyclesPerOp, "a chip operation takes a few cycles")
	}
	for _, c := range []struct {
		key string
		v   time.Duration
	}{
		{"tcam.timing.driver_per_write", tm.DriverPerWrite},
		{"tcam.timing.driver_per_move", tm.DriverPerMove},
		{"tcam.timing.driver_per_read", tm.DriverPerRead},
		{"tcam.timing.driver_per_invalidate", tm.DriverPerInvalidate},
		{"tcam.timing.driver_per_slow_move", tm.DriverPerSlowMove},
	} {
		b.dur(c.key, c.v, 0, MaxOpCost, "local-CPU time per TCAM operation; pica8-p3297: 300us per write")
	}
	// More free slots than the table has would make every insert slow.
	b.int("tcam.timing.slow_move_free_slots", int64(tm.SlowMoveFreeSlots), 0,
		int64(min(max(p.TCAM.Capacity, 0), MaxTCAMCapacity)), "at most tcam.capacity")
	timingBad = len(b.errs) > n

	b.int("backing_table.capacity", int64(p.BackingTable.Capacity), 0, MaxBackingCapacity, "0 = the data plane's default; pica8-p3297: 65536")
	b.dur("forwarding.hit_delay", p.Forwarding.HitDelay, 0, MaxOpCost, "a TCAM hit; pica8-p3297: 50us")
	b.dur("forwarding.packet_out_delay", p.Forwarding.PacketOutDelay, 0, MaxOpCost, "0 = hit_delay; ovs-netdev: 100s of us")
	b.dur("install.activation_delay", p.Install.ActivationDelay, 0, MaxOpCost, "after the install job; ovs-netdev: ms")
	b.dur("upcall.latency", p.Upcall.Latency, 0, MaxOpCost, "off-CPU, miss to the CPU's queue; ovs-netdev: 100s of us")
	b.dur("upcall.idle_latency", p.Upcall.IdleLatency, 0, MaxOpCost, "0 = no rate dependence; ovs-netdev: 100s of us")
	b.dur("upcall.idle_time_constant", p.Upcall.IdleTimeConstant, 0, MaxFlushPeriod, "0 = no rate dependence; ovs-netdev: ms")
	b.dur("controller_channel.latency", p.ControllerChannel.Latency, 0, MaxChannelLatency, "one way; pica8-p3297: 100us")
	return b.errs, agentBad, timingBad
}

// bounds collects out-of-range errors in one format:
// "KEY VALUE: must be in [MIN, MAX] (WHY)".
type bounds struct{ errs []error }

func (b *bounds) int(key string, v, lo, hi int64, why string) {
	if v < lo || v > hi {
		b.errs = append(b.errs, fmt.Errorf("%s %d: must be in [%d, %d] (%s)", key, v, lo, hi, why))
	}
}

func (b *bounds) dur(key string, v, lo, hi time.Duration, why string) {
	if v < lo || v > hi {
		b.errs = append(b.errs, fmt.Errorf("%s %v: must be in [%v, %v] (%s)", key, v, lo, hi, why))
	}
}

// float also rejects NaN and the infinities (YAML's .nan and .inf), which
// every comparison would otherwise let through.
func (b *bounds) float(key string, v, lo, hi float64, why string) {
	if math.IsNaN(v) || v < lo || v > hi {
		b.errs = append(b.errs, fmt.Errorf("%s %g: must be in [%g, %g] (%s)", key, v, lo, hi, why))
	}
}

package calibrate

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pseudocong/pseudocong/profile"
)

// fmtDur writes a duration in profile syntax ("us", never "µs"), three
// significant digits: the fits are not more precise than that.
func fmtDur(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Millisecond:
		return strconv.FormatFloat(float64(d)/1e3, 'g', 3, 64) + "us"
	case d < time.Second:
		return strconv.FormatFloat(float64(d)/1e6, 'g', 4, 64) + "ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'g', 4, 64) + "s"
}

// ProfileOptions name the written profile.
type ProfileOptions struct {
	Name string
	// HitDelayFrom picks the hit-delay statistic: "p10" (default), "min"
	// or "median". One-way delays include the host's own path (AF_PACKET
	// in and out, the veth or cable) and, on a busy host, scheduling
	// delay; the 10th percentile keeps the switch's part and drops most
	// of the noise.
	HitDelayFrom string
}

// WriteProfile renders the fitted profile as commented YAML: each value
// with its measurement, fit and uncertainty. Keys the run did not measure
// keep the ideal profile's value, are listed under provenance.missing,
// and the profile is marked partial. The text is checked with
// profile.Parse before it is returned.
func WriteProfile(res *Result, f Fits, o ProfileOptions) ([]byte, []string, error) {
	if o.Name == "" {
		o.Name = "calibrated"
	}
	var missing []string
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	miss := func(key string) { missing = append(missing, key) }

	w("# Measured by `pseudocong calibrate` on %s (%s), %s.", res.Switch, strings.TrimSpace(res.Desc), res.Started.UTC().Format(time.RFC3339))
	w("# Every value names its measurement, fit and uncertainty (±1 standard error).")
	w("# Durations are local-CPU or wall time of the switch as seen from the")
	w("# controller and two data ports; see docs/calibrate.md for what to trust.")
	w("name: %s", o.Name)
	w("description: >-")
	w("  Fitted by pseudocong calibrate from %s.", res.Switch)
	w("")
	// ---- agent
	w("agent:")
	if f.Burst != nil && f.Burst.BatchSize <= 1 {
		w("  # p: burst of %d misses, %d Packet-Ins back, no regular batches: the burst's", res.BurstSent, len(res.Burst))
		w("  # throughput, %v per Packet-In (%.0f/s). A lower bound on the switch's rate", f.Burst.PacketInCost.Round(10*time.Nanosecond), f.Burst.Rate)
		w("  # when it is near calibrate's own sending rate.")
		w("  packet_in_cost: %s", fmtDur(f.Burst.PacketInCost))
		if f.Burst.ReadBurst > 1 {
			w("  # The burst came back in regular groups of %d, but isolated misses waited no", f.Burst.ReadBurst)
			w("  # flush timer (under %v beyond build and channel): read bursts, not batches.", MaxReadBurstWait)
		}
		w("  batch_size: 1")
	} else if f.Burst != nil {
		w("  # p: burst of %d misses, %d Packet-Ins back; median over groups of the gap", res.BurstSent, len(res.Burst))
		w("  # before a group / its size: %v ± %v per Packet-In (%.0f/s).",
			f.Burst.PacketInCost.Round(time.Microsecond), f.Burst.SEPacketInCost.Round(time.Microsecond), f.Burst.Rate)
		w("  packet_in_cost: %s", fmtDur(f.Burst.PacketInCost))
		w("  # B: median size of the %d groups the burst arrived in (gap split at %v): %v.",
			len(f.Burst.Groups), f.Burst.GapSplit.Round(time.Microsecond), groupsSummary(f.Burst.Groups))
		w("  batch_size: %d", max(f.Burst.BatchSize, 1))
	} else {
		w("  # NOT MEASURED (%s): ideal value.", f.BurstErr)
		w("  packet_in_cost: 0s")
		w("  batch_size: 1")
		miss("agent.packet_in_cost")
		miss("agent.batch_size")
	}
	batch := 1
	if f.Burst != nil {
		batch = f.Burst.BatchSize
	}
	switch {
	case f.Flush != nil && batch > 1:
		kind := "one-shot (started by the first queued entry): delays constant"
		if f.Flush.Periodic {
			kind = "periodic: delays spread uniformly over the period"
		}
		w("  # Flush timer, %s. %d isolated misses, miss -> Packet-In", kind, f.Flush.Samples)
		how := "range x (n+1)/(n-1)"
		if f.Flush.Lattice {
			how = "the spacing of the lattice the Packet-In arrivals sit on (least squares)"
		}
		w("  # min %v, median %v, max %v; period = %s = %v ± %v.",
			f.Flush.MinDelay.Round(time.Microsecond), f.Flush.MedianDelay.Round(time.Microsecond), f.Flush.MaxDelay.Round(time.Microsecond),
			how, f.Flush.Period.Round(time.Millisecond/10), f.Flush.SE.Round(time.Millisecond/10))
		if !f.Flush.Periodic {
			w("  # The model's timer is periodic; a one-shot wait is written as its period.")
		}
		w("  flush_period: %s", fmtDur(max(f.Flush.Period, time.Millisecond)))
	case batch <= 1:
		if f.Flush != nil {
			w("  # No batching: isolated misses arrive after min %v, median %v, max %v.",
				f.Flush.MinDelay.Round(time.Microsecond), f.Flush.MedianDelay.Round(time.Microsecond), f.Flush.MaxDelay.Round(time.Microsecond))
		}
		w("  flush_period: 0s")
	default:
		w("  # NOT MEASURED (%s): batches without a timer would never leave; 100ms assumed.", f.FlushErr)
		w("  flush_period: 100ms")
		miss("agent.flush_period")
	}
	if f.Queue != nil && !f.Queue.LowerBound {
		w("  # Burst of %d misses in %v: %d Packet-Ins came back, %d dropped; minus the", f.Queue.Sent, res.QueueSendDur.Round(time.Microsecond), f.Queue.Received, f.Queue.Dropped)
		w("  # ones built while the burst arrived (and one on the CPU): %d.", f.Queue.Limit)
		w("  miss_queue_limit: %d", f.Queue.Limit)
	} else if f.Queue != nil {
		w("  # Burst of %d misses: none dropped, so the queue holds at least %d (lower bound).", f.Queue.Sent, f.Queue.Sent)
		w("  miss_queue_limit: %d", min(max(f.Queue.Limit, 1), profile.MaxQueueLimit))
	} else {
		w("  # NOT MEASURED: ideal value.")
		w("  miss_queue_limit: 1024")
		miss("agent.miss_queue_limit")
	}
	w("  # Not measured (a FLOW_MOD flood would have to overflow it): assumed.")
	w("  job_queue_limit: 4096")
	w("  # Not measured: no rate limiter modelled (the burst's rate is the CPU's).")
	w("  controller_rate_limit: 0")
	w("  controller_burst_limit: 0")
	w("  # Not measured: installs before queued Packet-In builds (as pica8-p3297).")
	w("  scheduling: install_first")
	w("")
	// ---- tcam
	w("tcam:")
	switch f.CapacityHow {
	case "cache":
		w("  # Tango-style: after %d ascending rules every rule was probed once, newest", len(res.Cache))
		w("  # first; %d answered at hit speed (median %v), %d needed a slow path (median %v);", f.Cache.Fast, f.Cache.FastDelay.Median.Round(time.Microsecond), f.Cache.Slow, f.Cache.SlowDelay.Median.Round(time.Microsecond))
		w("  # plus the switch's own %d rules (calibrate's guard rule, the oldest, is not", res.Foreign)
		w("  # counted: a switch that kept it in the fast table has one slot more).")
	case "table-full":
		w("  # ALL_TABLES_FULL at %d rules (including the switch's own %d); no cache seen.", res.TableFull, res.Foreign)
	default:
		w("  # LOWER BOUND: the run reached %d rules with every rule at hit speed and no", f.Capacity)
		w("  # ALL_TABLES_FULL; raise --max-rules to find the real size.")
	}
	w("  capacity: %d", min(max(f.Capacity, 1), profile.MaxTCAMCapacity))
	in := f.Insert
	if in != nil {
		w("  # Layout: insert batches fitted under each hypothesis and slow-path window;")
		w("  # lowest robust score (Huber loss on one scale + k ln n) wins:")
		for _, a := range in.Alternatives {
			w("  #   %-13s score %.1f, residual sigma %v, c_move %v, slow window %d", a.Layout, a.Score, a.Sigma.Round(time.Microsecond), a.CMove.Round(10*time.Nanosecond), a.SlowWindow)
		}
		layout := in.Layout
		if layout == LayoutFlat {
			w("  # flat: insert cost does not depend on priorities; written as highest-first")
			w("  # with driver_per_move 0, which prices the same.")
			layout = LayoutHighestFirst
		}
		w("  layout: %s", layout)
	} else {
		w("  # NOT MEASURED (%s): default layout.", f.InsertErr)
		w("  layout: highest-first")
		miss("tcam.layout")
	}
	w("  timing:")
	w("    # Chip side: not observable from outside; the model's default (ns, changes no result).")
	w("    clock_hz: 400000000")
	w("    cycles_per_lookup: 1")
	w("    cycles_per_write: 1")
	w("    cycles_per_read: 1")
	w("    cycles_per_invalidate: 1")
	if in != nil {
		w("    # duration(batch) = overhead + m*c_write + moves*c_move + slow moves*c_slow, least")
		w("    # squares (Huber-weighted) over %d batches of up to %d FLOW_MODs (%v), each timed from the first", in.Samples, in.MaxInsertsPerBatchUsed, patternsSummary(res))
		w("    # send to the first probe the last rule forwarded; residual sigma %v,", in.Sigma.Round(time.Microsecond))
		w("    # overhead %v ± %v per batch: the control channel, the probe resolution and", in.Overhead.Round(time.Microsecond), in.SEOverhead.Round(time.Microsecond))
		w("    # the switch's own FLOW_MOD -> data-plane activation beyond the per-rule cost")
		w("    # (Open vSwitch revalidates its datapath flows here); the model has no key for it.")
		w("    # c_write = %v ± %v", in.CWrite.Round(100*time.Nanosecond), in.SECWrite.Round(100*time.Nanosecond))
		w("    driver_per_write: %s", fmtDur(max(in.CWrite, 0)))
		w("    # c_move = %v ± %v per shifted entry (%s)", in.CMove.Round(10*time.Nanosecond), in.SECMove.Round(10*time.Nanosecond), in.Layout)
		w("    driver_per_move: %s", fmtDur(max(in.CMove, 0)))
		w("    # Not measured separately: a move's read is in c_move; set equal to it.")
		w("    driver_per_read: %s", fmtDur(max(in.CMove, 0)))
	} else {
		w("    driver_per_write: 0s")
		w("    driver_per_move: 0s")
		w("    driver_per_read: 0s")
		miss("tcam.timing.driver_per_write")
		miss("tcam.timing.driver_per_move")
	}
	if f.Delete != nil {
		w("    # DELETE_STRICT batches of 10 and 50 timed to their BARRIER_REPLY (%d batches):", f.Delete.Samples)
		w("    # %v ± %v per rule, overhead %v.", f.Delete.CInvalidate.Round(100*time.Nanosecond), f.Delete.SE.Round(100*time.Nanosecond), f.Delete.Overhead.Round(time.Microsecond))
		w("    driver_per_invalidate: %s", fmtDur(max(f.Delete.CInvalidate, 0)))
	} else {
		w("    # NOT MEASURED (%s): ideal value.", f.DeleteErr)
		w("    driver_per_invalidate: 0s")
		miss("tcam.timing.driver_per_invalidate")
	}
	if in != nil && in.SlowWindow > 0 {
		w("    # Slow path: moves made with at most %d free slots cost %v ± %v each (the", in.SlowWindow, in.CSlow.Round(100*time.Nanosecond), in.SECSlow.Round(100*time.Nanosecond))
		w("    # score chose this window over none and over every other window).")
		w("    slow_move_free_slots: %d", in.SlowWindow)
		w("    driver_per_slow_move: %s", fmtDur(in.CSlow))
	} else {
		w("    # No slow path near a full table found (or the table end was not reached).")
		w("    slow_move_free_slots: 0")
		w("    driver_per_slow_move: 0s")
	}
	w("")
	// ---- backing
	w("backing_table:")
	if f.Backing > 0 {
		w("  # ALL_TABLES_FULL at %d rules minus the fast table's %d.", res.TableFull, f.Capacity)
		w("  capacity: %d", min(f.Backing, profile.MaxBackingCapacity))
	} else {
		w("  # Not reached (no ALL_TABLES_FULL): model default.")
		w("  capacity: 65536")
	}
	w("  # Not measured: which rule a full fast table evicts; assumed.")
	w("  eviction: lru")
	if f.Cache != nil && f.Cache.IsCache {
		w("  # Slow path median %v against a full-table insert; a Packet-In build more", f.SlowPath.Median.Round(time.Microsecond))
		w("  # than the insert means the packet went up to the CPU first: %v.", f.SwapInUpcall)
		w("  swap_in_upcall: %v", f.SwapInUpcall)
	} else {
		w("  # No cache seen: unused.")
		w("  swap_in_upcall: false")
	}
	w("")
	w("forwarding:")
	hd, stat := f.Hit.P10, "10th percentile"
	switch o.HitDelayFrom {
	case "min":
		hd, stat = f.Hit.Min, "minimum"
	case "median":
		hd, stat = f.Hit.Median, "median"
	}
	if f.Hit.N > 0 {
		w("  # %d probes through one rule, one-way IF_IN -> IF_OUT: min %v, p10 %v, median %v,", f.Hit.N, f.Hit.Min.Round(time.Microsecond), f.Hit.P10.Round(time.Microsecond), f.Hit.Median.Round(time.Microsecond))
		w("  # p90 %v. Written: the %s (includes the host's own AF_PACKET path).", f.Hit.P90.Round(time.Microsecond), stat)
		w("  hit_delay: %s", fmtDur(hd))
	} else {
		w("  # NOT MEASURED: ideal value.")
		w("  hit_delay: 50us")
		miss("forwarding.hit_delay")
	}
	if pod := packetOutDelay(f); pod > 0 {
		w("  # PACKET_OUT path, controller send -> IF_OUT: median %v, p90 %v over %d, minus", f.PacketOut.Median.Round(time.Microsecond), f.PacketOut.P90.Round(time.Microsecond), f.PacketOut.N)
		w("  # the channel latency (%v): the packet the controller hands back goes through", (f.Echo.Median / 2).Round(time.Microsecond))
		w("  # the switch's slow path (Open vSwitch executes it on its main thread).")
		w("  packet_out_delay: %s", fmtDur(pod))
	} else {
		if f.PacketOut.N > 0 {
			w("  # PACKET_OUT path (median %v) not slower than a hit plus the channel: a", f.PacketOut.Median.Round(time.Microsecond))
			w("  # released packet is a hit.")
		} else {
			w("  # PACKET_OUT path not measured: a released packet is a hit.")
		}
		w("  packet_out_delay: 0s")
	}
	w("")
	w("install:")
	if a := f.Activation; a != nil {
		w("  # confirmation - BARRIER_REPLY per batch (%s, %d batches): mean %v, p10 %v,", a.Pattern, a.Gap.N, a.Gap.Mean.Round(time.Microsecond), a.Gap.P10.Round(time.Microsecond))
		w("  # median %v, p90 %v; %d below %v (the rule forwarded at once);", a.Gap.Median.Round(time.Microsecond), a.Gap.P90.Round(time.Microsecond), a.Immediate, minActivation)
		w("  # by pattern (median / p90):%s.", activationByPattern(a))
		if a.Waited.N > 0 {
			w("  # The %d at or above %v: median %v, p10 %v, p90 %v (on Open vSwitch the share", a.Waited.N, minActivation,
				a.Waited.Median.Round(time.Microsecond), a.Waited.P10.Round(time.Microsecond), a.Waited.P90.Round(time.Microsecond))
			w("  # that waits is a race with the switch's thread, not a switch constant).")
		}
		w("  # Activation = mean + channel latency - hit delay median - probe interval/2")
		w("  # = %v ± %v.", a.Raw.Round(time.Microsecond), a.SE.Round(time.Microsecond))
		if a.Resolved {
			w("  # The rule forwards this long after the switch said it was installed,")
			w("  # without holding the CPU (Open vSwitch: its revalidators replace the")
			w("  # datapath's cached flows).")
		} else {
			w("  # Not above max(%v, 3 SE): not resolved, the BARRIER waits for the data plane.", minActivation)
		}
		w("  activation_delay: %s", fmtDur(a.Delay))
	} else {
		w("  # NOT MEASURED (fewer than 5 insert batches with a BARRIER_REPLY): 0.")
		w("  activation_delay: 0s")
		miss("install.activation_delay")
	}
	w("")
	w("upcall:")
	if u := f.Upcall; u != nil {
		w("  # Misses sent %v to %v apart (paced and isolated; the host's timers stretch", u.Levels[0].Gap.Round(10*time.Microsecond), u.Levels[len(u.Levels)-1].Gap.Round(time.Millisecond))
		w("  # the shortest spacings): median")
		w("  # miss -> PACKET_IN per spacing (time since the previous miss / delay / misses):")
		for _, l := range u.Levels {
			w("  #   %v / %v / %d", l.Gap.Round(10*time.Microsecond), l.Delay.Round(time.Microsecond), l.N)
		}
		w("  # minus the channel latency and the Packet-In cost (%v); includes the", u.Base.Round(time.Microsecond))
		w("  # host's own AF_PACKET send path (tens of us).")
		if u.RateDependent {
			w("  # delay(g) = latency + (idle_latency - latency)(1 - exp(-g/idle_time_constant)),")
			w("  # least squares over the spacings' medians (time constant on a log grid): residual")
			w("  # sigma %v, idle term %v ± %v. The switch answers a miss more slowly after", u.Resid.Round(time.Microsecond), (u.IdleLatency - u.Latency).Round(time.Microsecond), u.SE.Round(time.Microsecond))
			w("  # idling (Open vSwitch: its one polling thread wakes from sleep).")
		} else {
			w("  # No rate dependence resolved (idle term not above max(%v, 3 SE)): the median", minUpcallIdle)
			w("  # over every miss.")
		}
		w("  latency: %s", fmtDur(u.Latency))
		w("  idle_latency: %s", fmtDur(u.IdleLatency))
		w("  idle_time_constant: %s", fmtDur(u.TimeConstant))
	} else {
		w("  # Not fitted (%s): 0.", f.UpcallErr)
		w("  latency: 0s")
		w("  idle_latency: 0s")
		w("  idle_time_constant: 0s")
		if f.Burst == nil || f.Burst.BatchSize <= 1 {
			miss("upcall.latency")
		}
	}
	w("")
	w("controller_channel:")
	if f.Echo.N > 0 {
		w("  # Half the median ECHO round trip over %d (min %v, median %v): includes the", f.Echo.N, f.Echo.Min.Round(time.Microsecond), f.Echo.Median.Round(time.Microsecond))
		w("  # switch's own handling of an echo.")
		w("  latency: %s", fmtDur(f.Echo.Median/2))
	} else {
		w("  latency: 100us")
		miss("controller_channel.latency")
	}
	w("")
	partial := res.Partial || len(missing) > 0
	w("provenance:")
	w("  tool: pseudocong calibrate")
	w("  switch: %q", strings.TrimSpace(res.Switch+" "+res.Desc))
	w("  measured_at: %q", res.Started.UTC().Format(time.RFC3339))
	w("  partial: %v", partial)
	if len(missing) > 0 {
		w("  missing: [%s]", strings.Join(missing, ", "))
	} else {
		w("  missing: []")
	}
	notes := fmt.Sprintf("%v run; %d batches; clean-up: %d rules removed, %d left over", res.Elapsed.Round(time.Second), len(res.Batches), res.Cleanup.Deleted, res.Cleanup.Leftover)
	if res.StopReason != "" {
		notes = "STOPPED EARLY: " + res.StopReason + "; " + notes
	}
	if res.Cleanup.Err != "" {
		notes += "; clean-up: " + res.Cleanup.Err
	}
	w("  notes: %q", notes)
	out := []byte(b.String())
	if _, err := profile.Parse(out, o.Name); err != nil {
		return out, missing, fmt.Errorf("calibrate: the written profile does not load: %w", err)
	}
	return out, missing, nil
}

func groupsSummary(g []int) string {
	if len(g) <= 12 {
		return fmt.Sprint(g)
	}
	return fmt.Sprintf("%v ... %v", g[:6], g[len(g)-6:])
}

func patternsSummary(res *Result) string {
	var parts []string
	for _, p := range Patterns {
		if n, ok := res.Fill[p]; ok {
			parts = append(parts, fmt.Sprintf("%s to %d", p, n))
		}
	}
	return strings.Join(parts, ", ")
}

// packetOutDelay is forwarding.packet_out_delay: the PACKET_OUT path's
// median minus the channel latency, written only when it is slower than
// a hit (the hit delay's median) by more than 20 µs and 10 %; otherwise 0
// (the released packet is a hit, as on a hardware switch).
func packetOutDelay(f Fits) time.Duration {
	if f.PacketOut.N == 0 || f.Echo.N == 0 || f.Hit.N == 0 {
		return 0
	}
	d := f.PacketOut.Median - f.Echo.Median/2
	if d-f.Hit.Median > max(20*time.Microsecond, f.Hit.Median/10) {
		return d
	}
	return 0
}

// activationByPattern lists the per-pattern gap medians and p90s in a
// fixed order.
func activationByPattern(a *ActivationFit) string {
	out := ""
	for _, pat := range []string{"ascending", "descending", "constant", "random"} {
		if st, ok := a.ByPattern[pat]; ok {
			out += fmt.Sprintf(" %s %v / %v", pat, st.Median.Round(100*time.Microsecond), st.P90.Round(100*time.Microsecond))
		}
	}
	return out
}

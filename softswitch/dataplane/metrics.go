package dataplane

import (
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the data plane's Prometheus series: the TCAM under
// pseudocong_tcam_, the backing table and the forwarding path under
// pseudocong_dataplane_. The agent's queues and Packet-In batches are the
// agent package's (pseudocong_agent_). All times are modelled seconds
// (virtual on a clock.Sim). To run several switches against one registry,
// wrap the registerer with a "switch" label per instance.
type Metrics struct {
	fwdObs sync.Map // path -> prometheus.Observer (forwardingObserver)

	tcamEntries     prometheus.Gauge
	tcamCapacity    prometheus.Gauge
	tcamMoves       prometheus.Counter
	tcamWrites      prometheus.Counter
	tcamInvalidates prometheus.Counter
	insertLatency   *prometheus.HistogramVec // cause = flow_mod | swap_in

	backingEntries  prometheus.Gauge
	backingCapacity prometheus.Gauge
	swapIns         prometheus.Counter
	evictions       prometheus.Counter

	forwardingDelay *prometheus.HistogramVec // path = hit | swap_in | install_wait
	drops           *prometheus.CounterVec   // reason
	held            prometheus.Gauge
}

// Causes of a TCAM insert (label cause of insert_latency_seconds).
const (
	CauseFlowMod = "flow_mod"
	CauseSwapIn  = "swap_in"
)

// Paths of a forwarded packet (label path of forwarding_delay_seconds).
const (
	// PathHit: the rule was in the TCAM; the packet paid the hit delay.
	PathHit = "hit"
	// PathSwapIn: the rule was in the backing table; the packet waited for
	// the swap-in, then the hit delay.
	PathSwapIn = "swap_in"
	// PathInstallWait: the rule's own install was still running on the
	// CPU; the packet waited for it, then the hit delay.
	PathInstallWait = "install_wait"
)

// DropReasons of pseudocong_dataplane_drops_total.
const (
	// DropHoldFull: the bound on packets waiting for a rule (swap-in or
	// install) was reached.
	DropHoldFull = "hold_full"
	// DropSwapInRefused: the agent's job queue refused the swap-in; the
	// packets waiting for it are dropped.
	DropSwapInRefused = "swap_in_refused"
	// DropDelayLineFull: the bound on packets in flight through the hit
	// delay was reached.
	DropDelayLineFull = "delay_line_full"
	// DropRuleGone: the rule a packet waited for was deleted first.
	DropRuleGone = "rule_gone"
	// DropStopped: the pipeline was stopped with the packet still held.
	DropStopped = "stopped"
)

// AllDropReasons lists every reason, for pre-initialisation and tests.
var AllDropReasons = []string{DropHoldFull, DropSwapInRefused, DropDelayLineFull, DropRuleGone, DropStopped}

// InsertLatencyBuckets span a free insert (0) to a full 4 000-entry shift
// at 16 µs per move (64 ms) and beyond.
var InsertLatencyBuckets = []float64{
	0.000001, 0.0001, 0.0003, 0.0005, 0.001, 0.002, 0.005, 0.01,
	0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.1, 0.25, 0.5, 1,
}

// NewMetrics creates the series and registers them on reg (nil: not
// registered, still usable).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	const ns = "pseudocong"
	m := &Metrics{
		tcamEntries: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: ns, Subsystem: "tcam", Name: "entries",
			Help: "Entries held in the TCAM (occupancy).",
		}),
		tcamCapacity: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: ns, Subsystem: "tcam", Name: "capacity_entries",
			Help: "TCAM slots (profile tcam.capacity).",
		}),
		tcamMoves: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: "tcam", Name: "entries_moved_total",
			Help: "TCAM entries relocated by inserts (each a read plus a write).",
		}),
		tcamWrites: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: "tcam", Name: "writes_total",
			Help: "TCAM slot writes, including those of moves.",
		}),
		tcamInvalidates: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: "tcam", Name: "invalidates_total",
			Help: "TCAM slot invalidations (deletes and evictions).",
		}),
		insertLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: ns, Subsystem: "tcam", Name: "insert_latency_seconds",
			Help:    "Local-CPU driver time of one TCAM insert including its moves and any eviction, by cause (modelled seconds).",
			Buckets: InsertLatencyBuckets,
		}, []string{"cause"}),
		backingEntries: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: ns, Subsystem: "dataplane", Name: "backing_entries",
			Help: "Rules held only in the backing table (outside the TCAM).",
		}),
		backingCapacity: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: ns, Subsystem: "dataplane", Name: "backing_capacity_entries",
			Help: "Capacity of the backing table.",
		}),
		swapIns: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: "dataplane", Name: "swap_ins_total",
			Help: "Rules brought from the backing table into the TCAM for a packet.",
		}),
		evictions: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: "dataplane", Name: "evictions_total",
			Help: "Rules pushed from the TCAM to the backing table to free a slot.",
		}),
		forwardingDelay: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: ns, Subsystem: "dataplane", Name: "forwarding_delay_seconds",
			Help:    "Time from a packet's table hit to its actions running, by path: hit, swap_in, install_wait (modelled seconds).",
			Buckets: prometheus.ExponentialBucketsRange(0.00001, 128, 22),
		}, []string{"path"}),
		drops: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: "dataplane", Name: "drops_total",
			Help: "Packets dropped by the data plane's model, by reason.",
		}, []string{"reason"}),
		held: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: ns, Subsystem: "dataplane", Name: "held_packets",
			Help: "Packets waiting for their rule to reach the TCAM (swap-in or install).",
		}),
	}
	for _, c := range []string{CauseFlowMod, CauseSwapIn} {
		m.insertLatency.WithLabelValues(c)
	}
	for _, p := range []string{PathHit, PathSwapIn, PathInstallWait} {
		m.forwardingDelay.WithLabelValues(p)
	}
	for _, r := range AllDropReasons {
		m.drops.WithLabelValues(r)
	}
	if reg == nil {
		return m, nil
	}
	collectors := m.collectors()
	for i, c := range collectors {
		if err := reg.Register(c); err != nil {
			for _, done := range collectors[:i] {
				reg.Unregister(done)
			}
			return nil, fmt.Errorf("dataplane metrics: register: %w", err)
		}
	}
	return m, nil
}

func (m *Metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.tcamEntries, m.tcamCapacity, m.tcamMoves, m.tcamWrites,
		m.tcamInvalidates, m.insertLatency, m.backingEntries, m.backingCapacity, m.swapIns,
		m.evictions, m.forwardingDelay, m.drops, m.held}
}

// Unregister removes the series from reg (for a caller whose set-up failed
// after NewMetrics). Safe on nil.
func (m *Metrics) Unregister(reg prometheus.Registerer) {
	if m == nil || reg == nil {
		return
	}
	for _, c := range m.collectors() {
		reg.Unregister(c)
	}
}

// ObserveForwarding records one packet's delay from table hit to delivery.
// Safe on a nil Metrics.
func (m *Metrics) ObserveForwarding(path string, d time.Duration) {
	if m != nil {
		m.forwardingObserver(path).Observe(d.Seconds())
	}
}

// forwardingObserver caches the histogram child of each path: the label
// look-up (hashing, a lock) per forwarded packet showed in profiles.
func (m *Metrics) forwardingObserver(path string) prometheus.Observer {
	if o, ok := m.fwdObs.Load(path); ok {
		return o.(prometheus.Observer)
	}
	o := m.forwardingDelay.WithLabelValues(path)
	m.fwdObs.Store(path, o)
	return o
}

// Drop counts one packet dropped for reason. Safe on a nil Metrics.
func (m *Metrics) Drop(reason string) {
	if m != nil {
		m.drops.WithLabelValues(reason).Inc()
	}
}

// SetHeld sets the number of packets waiting for a rule. Safe on nil.
func (m *Metrics) SetHeld(n int) {
	if m != nil {
		m.held.Set(float64(n))
	}
}

package vcc

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the Translator's Prometheus metrics (namespace pseudocong,
// subsystem vcc). A nil *Metrics disables them. Label values are the
// package's fixed reason constants, so the series are bounded.
type Metrics struct {
	flows       prometheus.Gauge
	evictions   *prometheus.CounterVec // reason
	passThrough *prometheus.CounterVec // reason
	counters    [numCounters]prometheus.Counter
	evictedBy   map[string]prometheus.Counter
	passedBy    map[string]prometheus.Counter
}

// NewMetrics creates and registers the metrics on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	const ns, sub = "pseudocong", "vcc"
	c := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: name, Help: help})
	}
	m := &Metrics{
		flows: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub,
			Name: "flows", Help: "Flows in the vCC flow table."}),
		evictions: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "flows_removed_total", Help: "Flows removed from the vCC flow table, by reason (idle: evicted after the idle timeout; fin, rst: closed; replaced: a new SYN on the tuple; peer_no_ecn: the peer refused ECN)."},
			[]string{"reason"}),
		passThrough: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "passthrough_total", Help: "TCP flows (SYNs) or frames left untranslated, by reason (ecn_tenant, table_full, peer_no_ecn: per flow; untracked: per frame)."},
			[]string{"reason"}),
	}
	m.counters = [numCounters]prometheus.Counter{
		cTranslatedSYNs:  c("translated_syns_total", "Non-ECN tenant SYNs rewritten to ask the peer for ECN."),
		cStrippedSYNACKs: c("synack_ece_stripped_total", "ECE cleared from the peer's SYN-ACK before the tenant saw it."),
		cEctMarked:       c("ect_marked_total", "Tenant data segments marked ECT(0)."),
		cEceSeen:         c("ece_seen_total", "ACKs towards a translated tenant carrying ECE."),
		cEceHidden:       c("ece_hidden_total", "ACKs towards a translated tenant whose ECE/CWR bits were cleared."),
		cReductions:      c("window_reductions_total", "vCC window reductions (at most one per smoothed RTT of a flow)."),
		cWindowRewrites:  c("window_rewrites_total", "ACKs towards a tenant whose receive window field was lowered."),
		cCwrSet:          c("cwr_set_total", "Tenant data segments given CWR to acknowledge a reduction to the peer."),
		cCeEchoed:        c("ce_echoed_total", "Tenant ACKs given ECE because the peer's data arrived CE-marked."),
	}
	cs := []prometheus.Collector{m.flows, m.evictions, m.passThrough}
	for _, col := range m.counters {
		cs = append(cs, col)
	}
	var errs []error
	for _, col := range cs {
		errs = append(errs, reg.Register(col))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	// Children cached: WithLabelValues hashes its labels on every call.
	m.evictedBy, m.passedBy = map[string]prometheus.Counter{}, map[string]prometheus.Counter{}
	for _, r := range []string{EvictIdle, EvictFIN, EvictRST, EvictReplaced, PassPeerNoECN} {
		m.evictedBy[r] = m.evictions.WithLabelValues(r)
	}
	for _, r := range []string{PassECNTenant, PassTableFull, PassPeerNoECN, PassUntracked} {
		m.passedBy[r] = m.passThrough.WithLabelValues(r)
	}
	return m, nil
}

// The plain counters, by index.
const (
	cTranslatedSYNs = iota
	cStrippedSYNACKs
	cEctMarked
	cEceSeen
	cEceHidden
	cReductions
	cWindowRewrites
	cCwrSet
	cCeEchoed
	numCounters
)

func (m *Metrics) inc(c int) {
	if m != nil {
		m.counters[c].Inc()
	}
}

func (m *Metrics) setFlows(n int) {
	if m != nil {
		m.flows.Set(float64(n))
	}
}

func (m *Metrics) evicted(reason string) {
	if m != nil {
		m.evictedBy[reason].Inc()
	}
}

func (m *Metrics) passed(reason string) {
	if m != nil {
		m.passedBy[reason].Inc()
	}
}

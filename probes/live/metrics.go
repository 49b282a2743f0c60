package live

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pseudocong/pseudocong/probes"
)

// registerResponderMetrics exposes a responder's counters as
// pseudocong_probe_responder_replies_total{kind="syn|data"} and
// pseudocong_probe_responder_ignored_total, read from its stats at scrape
// time.
func registerResponderMetrics(reg prometheus.Registerer, r *probes.Responder) error {
	if reg == nil {
		return nil
	}
	replies := func(kind string) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace: "pseudocong", Subsystem: "probe_responder", Name: "replies_total",
			Help:        "Probe requests answered: SYN with SYN-ACK (kind=syn), data with ACK (kind=data).",
			ConstLabels: prometheus.Labels{"kind": kind},
		}, func() float64 {
			st := r.Stats()
			if kind == probes.KindSYN.String() {
				return float64(st.SYNs)
			}
			return float64(st.Data)
		})
	}
	ignored := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Namespace: "pseudocong", Subsystem: "probe_responder", Name: "ignored_total",
		Help: "Probe packets that were not requests (replies, unknown types).",
	}, func() float64 { return float64(r.Stats().Ignored) })
	for _, c := range []prometheus.Collector{replies(probes.KindSYN.String()), replies(probes.KindData.String()), ignored} {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("responder metrics: %w", err)
		}
	}
	return nil
}

// listenerMetrics counts connections a TCP listener accepted:
// pseudocong_probe_listener_accepted_total.
func listenerMetrics(reg prometheus.Registerer) (prometheus.Counter, error) {
	c := prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "pseudocong", Subsystem: "probe_listener", Name: "accepted_total",
		Help: "TCP connections accepted (and closed at once) by the probe listener.",
	})
	if reg == nil {
		return c, nil
	}
	if err := reg.Register(c); err != nil {
		return nil, fmt.Errorf("listener metrics: %w", err)
	}
	return c, nil
}

// Package probemetrics exports probe RTTs to Prometheus. It is separate
// from package probes so the sans-I/O core, and sim runs that never scrape,
// do not depend on the Prometheus client.
package probemetrics

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pseudocong/pseudocong/probes"
)

// Observer is a probes.Observer that feeds the histogram
// pseudocong_probe_rtt_seconds{kind="syn|data"}.
type Observer struct {
	rtt *prometheus.HistogramVec
}

var _ probes.Observer = (*Observer)(nil)

// New registers the RTT histogram on reg. Its buckets span 50 µs to 200 s
// and include every SYN and data bin edge of the given timer profiles (the
// built-ins when none is given), so that "share of RTTs beyond 5.8 s" can
// be read off a bucket boundary exactly.
func New(reg prometheus.Registerer, profiles ...probes.TimerProfile) (*Observer, error) {
	if reg == nil {
		return nil, fmt.Errorf("probe metrics: nil registerer")
	}
	if len(profiles) == 0 {
		profiles = probes.BuiltinProfiles()
	}
	o := &Observer{rtt: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "pseudocong",
		Subsystem: "probe",
		Name:      "rtt_seconds",
		Help:      "Round-trip time of probe packets: SYN to SYN-ACK (kind=syn) or data segment to ACK (kind=data).",
		Buckets:   probes.RTTBuckets(profiles...),
	}, []string{"kind"})}
	if err := reg.Register(o.rtt); err != nil {
		return nil, fmt.Errorf("probe metrics: register rtt histogram: %w", err)
	}
	// Create both series up front so dashboards see zeros, not gaps.
	o.rtt.WithLabelValues(probes.KindSYN.String())
	o.rtt.WithLabelValues(probes.KindData.String())
	return o, nil
}

// ObserveRTT records one RTT.
func (o *Observer) ObserveRTT(k probes.Kind, rtt time.Duration) {
	o.rtt.WithLabelValues(k.String()).Observe(rtt.Seconds())
}

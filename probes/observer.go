package probes

import "time"

// Observer is told every measured RTT. It is how metrics hook in (see
// probes/probemetrics for the Prometheus one); sim runs leave it nil.
// ObserveRTT may be called from timer goroutines on the wall clock, so an
// implementation must be safe for concurrent use.
type Observer interface {
	ObserveRTT(k Kind, rtt time.Duration)
}

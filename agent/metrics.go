package agent

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the agent's Prometheus series, under pseudocong_agent_. To
// run several agents against one registry, give each its own wrapped
// registerer: prometheus.WrapRegistererWith(prometheus.Labels{"switch":
// name}, reg) (every instance, since Prometheus rejects one name with two
// label sets).
// All times are modelled seconds (virtual on a clock.Sim).
type Metrics struct {
	queueDepth      *prometheus.GaugeVec     // queue = miss | job | rate_limit | batch
	batchSize       prometheus.Histogram     // Packet-Ins per batch sent
	batches         *prometheus.CounterVec   // trigger = count | timer
	packetIns       prometheus.Counter       // Packet-Ins sent
	packetInLatency prometheus.Histogram     // miss → batch sent
	drops           *prometheus.CounterVec   // what = packet_in | job, reason
	cpuBusy         *prometheus.CounterVec   // work = packet_in | job kind
	jobLatency      *prometheus.HistogramVec // kind; queued → done
}

const (
	namespace = "pseudocong"
	subsystem = "agent"
)

// NewMetrics creates the series and registers them on reg (nil: not
// registered, still usable).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	// Latencies in this model span 50 µs (a hit) to 100 s (Fig. 9–19).
	latencyBuckets := prometheus.ExponentialBucketsRange(0.0005, 128, 17)
	m := &Metrics{
		queueDepth: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Subsystem: subsystem, Name: "queue_depth",
			Help: "Entries waiting in each local-CPU queue: miss (for a Packet-In build), job (Flow-Mods etc.), rate_limit (for a token), batch (for a flush).",
		}, []string{"queue"}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: namespace, Subsystem: subsystem, Name: "packet_in_batch_size",
			Help:    "Packet-Ins per batch sent to the controller.",
			Buckets: []float64{1, 2, 3, 5, 10, 15, 20, 24, 25, 30, 50, 100},
		}),
		batches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: subsystem, Name: "packet_in_batches_total",
			Help: "Batches sent to the controller, by what triggered the flush (count or timer).",
		}, []string{"trigger"}),
		packetIns: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: subsystem, Name: "packet_ins_sent_total",
			Help: "Packet-Ins handed to the controller channel.",
		}),
		packetInLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: namespace, Subsystem: subsystem, Name: "packet_in_latency_seconds",
			Help:    "Time from table miss to the Packet-In's batch being sent (modelled seconds).",
			Buckets: latencyBuckets,
		}),
		drops: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: subsystem, Name: "drops_total",
			Help: "Packet-Ins and jobs discarded by the agent, by reason.",
		}, []string{"what", "reason"}),
		cpuBusy: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: subsystem, Name: "cpu_busy_seconds_total",
			Help: "Local-CPU time spent, by work (packet_in or the job kind) (modelled seconds).",
		}, []string{"work"}),
		jobLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Subsystem: subsystem, Name: "job_latency_seconds",
			Help:    "Time from Submit to the job's completion (modelled seconds).",
			Buckets: latencyBuckets,
		}, []string{"kind"}),
	}
	for _, q := range []string{queueMiss, queueJob, queueRateLimit, queueBatch} {
		m.queueDepth.WithLabelValues(q)
	}
	for _, r := range DropReasons {
		m.drops.WithLabelValues(whatPacketIn, string(r))
	}
	m.drops.WithLabelValues(whatJob, string(DropJobQueueFull))
	m.drops.WithLabelValues(whatJob, string(DropStopped))
	m.batches.WithLabelValues(triggerCount)
	m.batches.WithLabelValues(triggerTimer)
	if reg == nil {
		return m, nil
	}
	collectors := []prometheus.Collector{m.queueDepth, m.batchSize, m.batches, m.packetIns,
		m.packetInLatency, m.drops, m.cpuBusy, m.jobLatency}
	for i, c := range collectors {
		if err := reg.Register(c); err != nil {
			for _, done := range collectors[:i] { // leave the registry as it was
				reg.Unregister(done)
			}
			return nil, fmt.Errorf("agent metrics: register: %w", err)
		}
	}
	return m, nil
}

const (
	queueMiss      = "miss"
	queueJob       = "job"
	queueRateLimit = "rate_limit"
	queueBatch     = "batch"
	whatPacketIn   = "packet_in"
	whatJob        = "job"
	triggerCount   = "count"
	triggerTimer   = "timer"
)

package controller

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/pseudocong/pseudocong/openflow"
)

// Metrics are the controller's Prometheus metrics (namespace pseudocong,
// subsystem controller). A nil *Metrics is valid and records nothing, so
// tests and the simulator can leave it out.
type Metrics struct {
	handling       *batchHistogram
	messages       [2][numTypeLabels]prometheus.Counter // [direction][type]
	connected      prometheus.Gauge
	flowMods       prometheus.Counter
	errorsReceived *prometheus.CounterVec
	protocolErrors prometheus.Counter
	macsDropped    prometheus.Counter
	reorder        *reorderMetrics

	// The TCP shell's admission control (see ServerConfig.MaxConns).
	openConns         prometheus.Gauge
	handshakingConns  prometheus.Gauge
	handshakeTimeouts prometheus.Counter
	refused           [numRefuseReasons]prometheus.Counter
}

// Reasons a new connection is refused (label reason of
// connections_refused_total), resolved once like the message types.
const (
	refuseMaxConns = iota
	refusePeerHandshakes
	numRefuseReasons
)

var refuseReasonLabels = [numRefuseReasons]string{
	refuseMaxConns:       "max_conns",
	refusePeerHandshakes: "peer_handshakes",
}

const (
	dirIn  = 0
	dirOut = 1
	// numTypeLabels covers OpenFlow 1.0's 22 types plus one "UNKNOWN"
	// bucket, so a hostile peer cannot grow the label set.
	numTypeLabels = int(openflow.TypeQueueGetConfigReply) + 2
	unknownType   = numTypeLabels - 1
)

// HandlingBuckets are the bounds of the Packet-In handling histogram:
// 10 µs to 10 s, about three buckets per decade, wide enough for a
// loopback controller (tens of µs) and for the paper's batched
// Packet-Ins (seconds).
var HandlingBuckets = prometheus.ExponentialBucketsRange(10e-6, 10, 19)

// NewMetrics creates the metrics and registers them with reg (which may be
// nil for unregistered metrics).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	const ns, sub = "pseudocong", "controller"
	m := &Metrics{
		handling: newBatchHistogram(prometheus.HistogramOpts{
			Namespace: ns, Subsystem: sub, Name: "packet_in_handling_seconds",
			Help:    "Time from receiving a PACKET_IN to sending the FLOW_MOD it caused (controller clock).",
			Buckets: HandlingBuckets,
		}),
		connected: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: ns, Subsystem: sub, Name: "connected_switches",
			Help: "Switches that completed the OpenFlow handshake and are connected.",
		}),
		flowMods: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "flow_mods_total",
			Help: "FLOW_MOD messages sent to switches.",
		}),
		errorsReceived: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "errors_received_total",
			Help: "OpenFlow ERROR messages received from switches, by error type.",
		}, []string{"type"}),
		protocolErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "protocol_errors_total",
			Help: "Malformed or unsupported messages received from switches (answered with an ERROR or a close).",
		}),
		macsDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "mac_learning_dropped_total",
			Help: "Source MACs not learned because the switch's MAC table was full.",
		}),
	}
	messages := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: sub, Name: "messages_total",
		Help: "OpenFlow messages exchanged with switches, by direction (in = from switches) and type.",
	}, []string{"direction", "type"})
	// Resolve every label pair once: the hot path then costs one atomic add.
	for d, dir := range []string{"in", "out"} {
		for t := range numTypeLabels {
			name := "UNKNOWN"
			if t != unknownType {
				name = openflow.Type(t).String()
			}
			m.messages[d][t] = messages.WithLabelValues(dir, name)
		}
	}
	m.openConns = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: ns, Subsystem: sub, Name: "open_connections",
		Help: "Switch connections open, handshaking or connected (bounded by --max-conns).",
	})
	m.handshakingConns = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: ns, Subsystem: sub, Name: "handshaking_connections",
		Help: "Switch connections that have not completed HELLO and FEATURES yet.",
	})
	m.handshakeTimeouts = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: ns, Subsystem: sub, Name: "handshake_timeouts_total",
		Help: "Connections closed because HELLO and FEATURES did not complete within the handshake timeout.",
	})
	refused := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: sub, Name: "connections_refused_total",
		Help: "Connections closed on accept, by reason: max_conns (too many open), peer_handshakes (too many handshaking from that source IP).",
	}, []string{"reason"})
	for r, label := range refuseReasonLabels {
		m.refused[r] = refused.WithLabelValues(label)
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.openConns, m.handshakingConns, m.handshakeTimeouts, refused} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("controller metrics: %w", err)
			}
		}
	}
	var reorderCollectors []prometheus.Collector
	m.reorder, reorderCollectors = newReorderMetrics(ns, sub)
	if reg != nil {
		for _, c := range reorderCollectors {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("controller metrics: %w", err)
			}
		}
		for _, c := range []prometheus.Collector{m.handling, messages, m.connected, m.flowMods, m.errorsReceived, m.protocolErrors, m.macsDropped} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("controller metrics: %w", err)
			}
		}
	}
	return m, nil
}

func typeLabel(t openflow.Type) int {
	if int(t) < unknownType {
		return int(t)
	}
	return unknownType
}

// MessageIn counts a message received from a switch.
func (m *Metrics) MessageIn(t openflow.Type) {
	if m != nil {
		m.messages[dirIn][typeLabel(t)].Inc()
	}
}

// MessageOut counts a message sent to a switch.
func (m *Metrics) MessageOut(t openflow.Type) {
	if m == nil {
		return
	}
	m.messages[dirOut][typeLabel(t)].Inc()
	if t == openflow.TypeFlowMod {
		m.flowMods.Inc()
	}
}

// ProtocolError counts a malformed or unsupported message from a switch.
func (m *Metrics) ProtocolError() {
	if m != nil {
		m.protocolErrors.Inc()
	}
}

func (m *Metrics) observeHandling(d time.Duration) { m.observeHandlingN(d, 1) }

// observeHandlingN records n PACKET_INs handled in d each.
func (m *Metrics) observeHandlingN(d time.Duration, n uint64) {
	if m != nil {
		m.handling.ObserveN(d.Seconds(), n)
	}
}

// add counts n messages of type t in direction dir (dirIn, dirOut).
func (m *Metrics) add(dir int, t openflow.Type, n uint64) {
	if m == nil || n == 0 {
		return
	}
	m.messages[dir][typeLabel(t)].Add(float64(n))
	if dir == dirOut && t == openflow.TypeFlowMod {
		m.flowMods.Add(float64(n))
	}
}

func (m *Metrics) switchConnected(delta float64) {
	if m != nil {
		m.connected.Add(delta)
	}
}

func (m *Metrics) errorReceived(t openflow.ErrorType) {
	if m != nil {
		label := "UNKNOWN"
		if t <= openflow.ErrorTypeQueueOpFailed {
			label = t.String()
		}
		m.errorsReceived.WithLabelValues(label).Inc()
	}
}

func (m *Metrics) macDropped() {
	if m != nil {
		m.macsDropped.Inc()
	}
}

func (m *Metrics) connRefused(reason int) {
	if m != nil {
		m.refused[reason].Inc()
	}
}

func (m *Metrics) connOpen(delta float64) {
	if m != nil {
		m.openConns.Add(delta)
	}
}

func (m *Metrics) connHandshaking(delta float64) {
	if m != nil {
		m.handshakingConns.Add(delta)
	}
}

func (m *Metrics) handshakeTimedOut() {
	if m != nil {
		m.handshakeTimeouts.Inc()
	}
}

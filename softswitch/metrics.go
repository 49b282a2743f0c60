package softswitch

import (
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/pseudocong/pseudocong/openflow"
)

// Metrics are the switch core's Prometheus metrics (namespace pseudocong,
// subsystem switch). A nil *Metrics disables them. Port labels are port
// numbers; their number is bounded by the ports of the switch.
type Metrics struct {
	rxVec          *prometheus.CounterVec // port
	txVec          *prometheus.CounterVec // port
	dropVec        *prometheus.CounterVec // port, reason
	tableMisses    prometheus.Counter
	packetIns      *prometheus.CounterVec // reason
	flowMods       *prometheus.CounterVec // command, result
	flowEntries    prometheus.Gauge
	flowRemovedVec *prometheus.CounterVec // reason
	sendErrors     prometheus.Counter

	// Per-port children, cached: WithLabelValues hashes its labels, which
	// is too slow for every packet.
	mu    sync.Mutex
	rx    map[uint16]prometheus.Counter
	tx    map[uint16]prometheus.Counter
	drops map[dropKey]prometheus.Counter
}

type dropKey struct {
	port   uint16
	reason string
}

// NewMetrics creates and registers the metrics.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	const ns, sub = "pseudocong", "switch"
	m := &Metrics{
		rxVec: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "packets_received_total", Help: "Frames received, by input port."}, []string{"port"}),
		txVec: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "packets_forwarded_total", Help: "Frames queued for transmission, by output port."}, []string{"port"}),
		dropVec: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "packets_dropped_total", Help: "Frames dropped, by port and reason."}, []string{"port", "reason"}),
		tableMisses: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "table_misses_total", Help: "Packets that matched no flow entry."}),
		packetIns: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "packet_ins_sent_total", Help: "PACKET_IN messages sent to controllers, by reason."}, []string{"reason"}),
		flowMods: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "flow_mods_total", Help: "FLOW_MOD messages processed, by command and result."}, []string{"command", "result"}),
		flowEntries: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub,
			Name: "flow_entries", Help: "Entries in the flow table."}),
		flowRemovedVec: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "flow_removed_sent_total", Help: "FLOW_REMOVED messages sent, by reason."}, []string{"reason"}),
		sendErrors: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "channel_send_errors_total", Help: "OpenFlow messages a connection refused (queue full or closed)."}),
		rx:    make(map[uint16]prometheus.Counter),
		tx:    make(map[uint16]prometheus.Counter),
		drops: make(map[dropKey]prometheus.Counter),
	}
	for _, c := range []prometheus.Collector{m.rxVec, m.txVec, m.dropVec, m.tableMisses, m.packetIns,
		m.flowMods, m.flowEntries, m.flowRemovedVec, m.sendErrors} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	for _, r := range []string{"no_match", "action"} {
		m.packetIns.WithLabelValues(r)
	}
	for _, r := range []string{"idle_timeout", "hard_timeout", "delete"} {
		m.flowRemovedVec.WithLabelValues(r)
	}
	return m, nil
}

func portLabel(p uint16) string {
	if p > openflow.PortMax {
		return openflow.PortName(p)
	}
	return strconv.Itoa(int(p))
}

func (m *Metrics) child(cache map[uint16]prometheus.Counter, vec *prometheus.CounterVec, port uint16) prometheus.Counter {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := cache[port]
	if !ok {
		c = vec.WithLabelValues(portLabel(port))
		cache[port] = c
	}
	return c
}

func (m *Metrics) received(port uint16) {
	if m != nil {
		m.child(m.rx, m.rxVec, port).Inc()
	}
}

func (m *Metrics) forwarded(port uint16) {
	if m != nil {
		m.child(m.tx, m.txVec, port).Inc()
	}
}

func (m *Metrics) dropped(port uint16, reason string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	k := dropKey{port, reason}
	c, ok := m.drops[k]
	if !ok {
		c = m.dropVec.WithLabelValues(portLabel(port), reason)
		m.drops[k] = c
	}
	m.mu.Unlock()
	c.Inc()
}

func (m *Metrics) tableMiss() {
	if m != nil {
		m.tableMisses.Inc()
	}
}

func (m *Metrics) packetIn(reason uint8) {
	if m != nil {
		r := "no_match"
		if reason == openflow.PacketInReasonAction {
			r = "action"
		}
		m.packetIns.WithLabelValues(r).Inc()
	}
}

func (m *Metrics) flowMod(cmd uint16, ok bool) {
	if m != nil {
		res := "ok"
		if !ok {
			res = "error"
		}
		m.flowMods.WithLabelValues(openflow.FlowModCommandName(cmd), res).Inc()
	}
}

func (m *Metrics) setFlowEntries(n int) {
	if m != nil {
		m.flowEntries.Set(float64(n))
	}
}

func (m *Metrics) flowRemoved(reason uint8) {
	if m != nil {
		r := [...]string{"idle_timeout", "hard_timeout", "delete"}
		if int(reason) < len(r) {
			m.flowRemovedVec.WithLabelValues(r[reason]).Inc()
		}
	}
}

func (m *Metrics) sendFailed() {
	if m != nil {
		m.sendErrors.Inc()
	}
}

package softswitch

import (
	"errors"
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
	chanDrops      *prometheus.CounterVec // role, type, reason
	peerErrors     *prometheus.CounterVec // role, type
	svcRefused     *prometheus.CounterVec // reason
	connTimeouts   *prometheus.CounterVec // role, phase
	svcConns       prometheus.Gauge

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
		chanDrops: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "channel_messages_dropped_total",
			Help: "OpenFlow messages for a connection that were dropped, by role, message type and reason (queue_full: the peer was not reading; closed: the connection had ended)."},
			[]string{"role", "type", "reason"}),
		peerErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "openflow_errors_received_total", Help: "OpenFlow ERROR messages received from peers, by role and error type."},
			[]string{"role", "type"}),
		svcRefused: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "management_connections_refused_total", Help: "Management connections closed at accept, by the limit they hit."},
			[]string{"reason"}),
		connTimeouts: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "connection_timeouts_total", Help: "OpenFlow connections closed by a timeout, by role and phase (handshake, idle)."},
			[]string{"role", "phase"}),
		svcConns: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub,
			Name: "management_connections", Help: "Management connections open (handshake included)."}),
		rx:    make(map[uint16]prometheus.Counter),
		tx:    make(map[uint16]prometheus.Counter),
		drops: make(map[dropKey]prometheus.Counter),
	}
	for _, c := range []prometheus.Collector{m.rxVec, m.txVec, m.dropVec, m.tableMisses, m.packetIns,
		m.flowMods, m.flowEntries, m.flowRemovedVec, m.sendErrors, m.chanDrops, m.peerErrors, m.svcRefused,
		m.connTimeouts, m.svcConns} {
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
	for _, r := range []string{refusedMaxConns, refusedPerPeer} {
		m.svcRefused.WithLabelValues(r)
	}
	for _, role := range []Role{RoleController, RoleService} {
		for _, phase := range []string{"handshake", "idle"} {
			m.connTimeouts.WithLabelValues(role.String(), phase)
		}
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

// portCounters are a port's rx and tx counters, looked up once when the
// port is added (nil without Metrics): the per-packet path then skips the
// label cache's lock and map.
func (m *Metrics) portCounters(port uint16) (rx, tx prometheus.Counter) {
	if m == nil {
		return nil, nil
	}
	return m.child(m.rx, m.rxVec, port), m.child(m.tx, m.txVec, port)
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

// dropReason is the reason label of a message a connection refused.
func dropReason(err error) string {
	switch {
	case errors.Is(err, openflow.ErrQueueFull):
		return "queue_full"
	case errors.Is(err, openflow.ErrClosed):
		return "closed"
	}
	return "error"
}

func (m *Metrics) channelDropped(role Role, t openflow.Type, err error) {
	if m != nil {
		m.chanDrops.WithLabelValues(role.String(), t.String(), dropReason(err)).Inc()
	}
}

func (m *Metrics) errorReceived(role Role, t openflow.ErrorType) {
	if m != nil {
		label := "other"
		if t <= openflow.ErrorTypeQueueOpFailed {
			label = t.String()
		}
		m.peerErrors.WithLabelValues(role.String(), label).Inc()
	}
}

func (m *Metrics) serviceRefused(reason string) {
	if m != nil {
		m.svcRefused.WithLabelValues(reason).Inc()
	}
}

func (m *Metrics) connTimeout(role Role, phase string) {
	if m != nil {
		m.connTimeouts.WithLabelValues(role.String(), phase).Inc()
	}
}

func (m *Metrics) setServiceConns(n int) {
	if m != nil {
		m.svcConns.Set(float64(n))
	}
}

package egress

import (
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics exports the shapers' counters per port, read at scrape time:
// frames the qdisc took, dropped (by the qdisc, the loss model, or a full
// delay line), marked CE, and sent; and what each holds now.
type Metrics struct {
	mu     sync.Mutex
	shaped []shaped

	enq, drops, marked, sent, sentBytes, txErr, backlog, backlogBytes, inDelay *prometheus.Desc
}

type shaped struct {
	no, iface string
	s         *Shaper
}

// NewMetrics registers the collector on reg (nil: unregistered).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	labels := []string{"port", "iface"}
	d := func(name, help string, extra ...string) *prometheus.Desc {
		return prometheus.NewDesc("pseudocong_port_egress_"+name, help, append(labels, extra...), nil)
	}
	m := &Metrics{
		enq:          d("enqueued_total", "Frames the port's emulated link took into its qdisc (or onto its delay line without one)."),
		drops:        d("dropped_total", "Frames the port's emulated link dropped: reason qdisc (refused: full, RED, policer), loss (the loss model), delay_line (the delay line full).", "reason"),
		marked:       d("marked_total", "Frames the port's qdisc marked ECN CE instead of dropping."),
		sent:         d("sent_total", "Frames the port's emulated link wrote to the socket."),
		sentBytes:    d("sent_bytes_total", "Bytes of the frames the port's emulated link wrote to the socket."),
		txErr:        d("tx_errors_total", "Frames the port's emulated link failed to write."),
		backlog:      d("backlog_packets", "Frames in the port's qdisc now."),
		backlogBytes: d("backlog_bytes", "Bytes in the port's qdisc now."),
		inDelay:      d("delay_line_packets", "Frames on the port's delay line now."),
	}
	if reg != nil {
		if err := reg.Register(m); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Add starts exporting s's counters as port no on iface.
func (m *Metrics) Add(no uint16, iface string, s *Shaper) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.shaped = append(m.shaped, shaped{no: strconv.Itoa(int(no)), iface: iface, s: s})
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{m.enq, m.drops, m.marked, m.sent, m.sentBytes, m.txErr, m.backlog, m.backlogBytes, m.inDelay} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	all := append([]shaped(nil), m.shaped...)
	m.mu.Unlock()
	c := func(d *prometheus.Desc, v uint64, l ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), l...)
	}
	g := func(d *prometheus.Desc, v int, l ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), l...)
	}
	for _, x := range all {
		st := x.s.Stats()
		c(m.enq, st.Enqueued, x.no, x.iface)
		c(m.drops, st.QdiscDropped, x.no, x.iface, "qdisc")
		c(m.drops, st.Lost, x.no, x.iface, "loss")
		c(m.drops, st.DelayDropped, x.no, x.iface, "delay_line")
		c(m.marked, st.Marked, x.no, x.iface)
		c(m.sent, st.Sent, x.no, x.iface)
		c(m.sentBytes, st.SentBytes, x.no, x.iface)
		c(m.txErr, st.TxErrors, x.no, x.iface)
		g(m.backlog, st.Backlog, x.no, x.iface)
		g(m.backlogBytes, st.BacklogBytes, x.no, x.iface)
		g(m.inDelay, st.InDelay, x.no, x.iface)
	}
}

package afport

import (
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics exports the AF_PACKET counters of a switch's Linux ports, read
// at scrape time: frames received, frames the kernel dropped because the
// receive ring was full (packets the switch never saw — a live run that
// drops here measures something the model does not), failed writes, and
// rebinds after the interface went down or was re-created.
type Metrics struct {
	mu    sync.Mutex
	ports []*Port

	rx, drops, txErr, rebinds *prometheus.Desc
}

// NewMetrics registers the collector on reg (nil: unregistered).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	labels := []string{"port", "iface"}
	m := &Metrics{
		rx: prometheus.NewDesc("pseudocong_afport_rx_frames_total",
			"Frames read from the port's AF_PACKET ring.", labels, nil),
		drops: prometheus.NewDesc("pseudocong_afport_kernel_drops_total",
			"Frames the kernel dropped because the port's receive ring was full.", labels, nil),
		txErr: prometheus.NewDesc("pseudocong_afport_tx_errors_total",
			"Frames the port failed to write.", labels, nil),
		rebinds: prometheus.NewDesc("pseudocong_afport_rebinds_total",
			"Times the port's socket was bound again after its interface went down or was re-created.", labels, nil),
	}
	if reg != nil {
		if err := reg.Register(m); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Add starts exporting p's counters.
func (m *Metrics) Add(p *Port) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ports = append(m.ports, p)
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- m.rx
	ch <- m.drops
	ch <- m.txErr
	ch <- m.rebinds
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	ports := append([]*Port(nil), m.ports...)
	m.mu.Unlock()
	for _, p := range ports {
		st := p.Stats()
		no := strconv.Itoa(int(p.No()))
		ch <- prometheus.MustNewConstMetric(m.rx, prometheus.CounterValue, float64(st.RxFrames), no, p.Name())
		ch <- prometheus.MustNewConstMetric(m.drops, prometheus.CounterValue, float64(st.KernelDrops), no, p.Name())
		ch <- prometheus.MustNewConstMetric(m.txErr, prometheus.CounterValue, float64(st.TxErrors), no, p.Name())
		ch <- prometheus.MustNewConstMetric(m.rebinds, prometheus.CounterValue, float64(st.Rebinds), no, p.Name())
	}
}

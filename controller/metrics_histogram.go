package controller

import (
	"math"
	"sort"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// batchHistogram is a Prometheus histogram that can record n equal
// observations at once (ObserveN). The TCP shell times PACKET_IN handling
// per batch: every FLOW_MOD written by one write took the same time from
// the read that brought its PACKET_IN, so one update records them all,
// instead of n updates of counters shared by every switch's goroutine.
// It exposes exactly what a prometheus.Histogram with the same options
// would.
type batchHistogram struct {
	desc    *prometheus.Desc
	upper   []float64
	buckets []atomic.Uint64 // non-cumulative; the last is +Inf
	count   atomic.Uint64
	sumBits atomic.Uint64
}

func newBatchHistogram(opts prometheus.HistogramOpts) *batchHistogram {
	return &batchHistogram{
		desc:    prometheus.NewDesc(prometheus.BuildFQName(opts.Namespace, opts.Subsystem, opts.Name), opts.Help, nil, nil),
		upper:   opts.Buckets,
		buckets: make([]atomic.Uint64, len(opts.Buckets)+1),
	}
}

// ObserveN records n observations of v.
func (h *batchHistogram) ObserveN(v float64, n uint64) {
	if n == 0 {
		return
	}
	h.buckets[sort.SearchFloat64s(h.upper, v)].Add(n)
	for {
		old := h.sumBits.Load()
		if h.sumBits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v*float64(n))) {
			break
		}
	}
	h.count.Add(n)
}

// Observe records one observation.
func (h *batchHistogram) Observe(v float64) { h.ObserveN(v, 1) }

// It is a prometheus.Histogram, so whatever inspects collectors by type
// (the dashboard test, registries) sees a histogram.
var _ prometheus.Histogram = (*batchHistogram)(nil)

// Desc is prometheus.Metric's.
func (h *batchHistogram) Desc() *prometheus.Desc { return h.desc }

func (h *batchHistogram) Describe(ch chan<- *prometheus.Desc) { ch <- h.desc }

func (h *batchHistogram) Collect(ch chan<- prometheus.Metric) { ch <- h.snapshot() }

// Write is prometheus.Metric's, for tests that read the histogram.
func (h *batchHistogram) Write(m *dto.Metric) error { return h.snapshot().Write(m) }

func (h *batchHistogram) snapshot() prometheus.Metric {
	cum := make(map[float64]uint64, len(h.upper))
	var acc uint64
	for i, le := range h.upper {
		acc += h.buckets[i].Load()
		cum[le] = acc
	}
	// count is read after the buckets, so it is never below their sum
	// (observations racing with a scrape show up in count first).
	count := max(h.count.Load(), acc)
	return prometheus.MustNewConstHistogram(h.desc, count, math.Float64frombits(h.sumBits.Load()), cum)
}

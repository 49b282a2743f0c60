package live

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/pseudocong/pseudocong/experiments/sim"
)

// Summary keys the live backend adds to summary.json (docs/live.md):
//
//	kernel.syn_retransmits.<profile>     SYN retransmissions (TCP_INFO), summed
//	kernel.retransmitted_share.<profile> share of connects with ≥ 1 retransmission
//	kernel.handshake_p50_s.<profile>     median connect() handshake time
//	kernel.handshake_max_s.<profile>     longest handshake
//	kernel.connected_share.<profile>     share of connects that completed
//	kernel.handshake_p99_s.<name>        99th percentile handshake time
//	kernel.nstat_syn_retrans.<name>      host 1's TcpExtTCPSynRetrans (nstat)
//	kernel.nstat_timeouts.<name>         host 1's TcpExtTCPTimeouts
//	kernel.data_rtos.<name>              host 1's data RTOs (KernelResult.DataRTOs)
//	                                     (these four only from runs that read
//	                                     the counters; <profile> is the variant's
//	                                     name when it has one)
//	agreement.live_over_sim.median_rtt.<cell key>
//	                                     live median RTT / sim median RTT of
//	                                     the cell (answered probes)
//	agreement.live_over_sim.median_rtt   the geometric mean of those ratios
//	                                     (the plain ratio for one cell)
//	agreement.live_median_rtt_s, agreement.sim_median_rtt_s
//	                                     medians over every cell's RTTs
const (
	KeyAgreement = "agreement.live_over_sim.median_rtt"
)

// KernelKey is the summary key of metric for a kernel run's profile.
func KernelKey(metric, profileName string) string { return "kernel." + metric + "." + profileName }

// Values computes the live backend's own summary values.
func Values(cells []Cell, live, simulated []*sim.Outcome, kernel []KernelResult) map[string][]float64 {
	v := map[string][]float64{}
	// Per cell, like against like; the headline is the geometric mean of
	// the cells' ratios. Pooling the RTTs of different cells instead would
	// put the median in the gap between a fast and a slow cell, where a
	// handful of samples decide it.
	var logSum float64
	var n int
	var allLive, allSim []time.Duration
	for i, c := range cells {
		if i >= len(live) || i >= len(simulated) {
			break
		}
		l, s := answered(live[i]), answered(simulated[i])
		allLive, allSim = append(allLive, l...), append(allSim, s...)
		r, ok := ratio(l, s)
		if !ok {
			continue
		}
		if c.Key != "" {
			v[KeyAgreement+"."+c.Key] = []float64{r}
		}
		logSum += math.Log(r)
		n++
	}
	if n > 0 {
		v[KeyAgreement] = []float64{math.Exp(logSum / float64(n))}
		v["agreement.live_median_rtt_s"] = []float64{sortedMedian(allLive).Seconds()}
		v["agreement.sim_median_rtt_s"] = []float64{sortedMedian(allSim).Seconds()}
	}
	for _, k := range kernel {
		name := cmp.Or(k.Name, k.Profile)
		v[KernelKey("syn_retransmits", name)] = []float64{float64(k.SYNRetransmits)}
		v[KernelKey("handshake_p50_s", name)] = []float64{k.P50.Seconds()}
		v[KernelKey("handshake_max_s", name)] = []float64{k.Max.Seconds()}
		if k.Flows > 0 {
			v[KernelKey("retransmitted_share", name)] = []float64{float64(k.Retransmitted) / float64(k.Flows)}
			v[KernelKey("connected_share", name)] = []float64{float64(k.Connected) / float64(k.Flows)}
		}
		if k.Client != nil { // kernel counters read (not in older results)
			v[KernelKey("handshake_p99_s", name)] = []float64{k.P99.Seconds()}
			v[KernelKey("nstat_syn_retrans", name)] = []float64{k.Client["TcpExtTCPSynRetrans"]}
			v[KernelKey("nstat_timeouts", name)] = []float64{k.Client["TcpExtTCPTimeouts"]}
			v[KernelKey("data_rtos", name)] = []float64{k.DataRTOs()}
		}
	}
	return v
}

// answered returns the delays of the delivered flows.
func answered(o *sim.Outcome) []time.Duration {
	if o == nil {
		return nil
	}
	var out []time.Duration
	for i, d := range o.Delays {
		if i < len(o.Delivered) && o.Delivered[i] {
			out = append(out, d)
		}
	}
	return out
}

// ratio is median(a) / median(b); ok is false when either is empty or
// b's median is zero.
func ratio(a, b []time.Duration) (float64, bool) {
	if len(a) == 0 || len(b) == 0 {
		return 0, false
	}
	ma, mb := sortedMedian(a), sortedMedian(b)
	if mb <= 0 {
		return 0, false
	}
	return float64(ma) / float64(mb), true
}

func sortedMedian(xs []time.Duration) time.Duration {
	s := slices.Clone(xs)
	slices.Sort(s)
	return median(s)
}

// median of a sorted, non-empty slice (the mean of the middle two for an
// even length).
func median(s []time.Duration) time.Duration {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

package experiments

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pseudocong/pseudocong/probes"
)

// Summary keys are "[<key_prefix>.]<experiment id>.<metric>.<dims>", where
// dims names the grid dimensions that vary within the experiment, in the
// order chain length ("k3"), base load ("L3500"), rate ("5000pps"),
// priority ("ascending"); an experiment with a single cell gets no dims
// part. Metrics per kind (docs/experiments.md), the median ones only when
// an experiment's metrics list selects them:
//
//	packet_in  max_delay_s, mean_delay_s, controller_mean_s, median_delay_s
//	handshake  bins (shares per SYN timer bin), max_rtt_s, mean_rtt_s,
//	           median_rtt_s
//	data       share_gt_<E1>s (share of RTTs ≥ the first data RTO),
//	           max_rtt_s, mean_rtt_s, median_rtt_s
//
// Delays and RTTs are over the answered flows; unanswered ones count in the
// last bin and in the share beyond E1.

// cellKey returns the key of metric for cell c.
func cellKey(c Cell, metric string) string {
	var dims []string
	if len(c.Exp.Chain) > 1 {
		dims = append(dims, fmt.Sprintf("k%d", c.Switches))
	}
	if len(c.Exp.BaseLoads) > 1 {
		dims = append(dims, fmt.Sprintf("L%d", c.BaseLoad))
	}
	if len(c.Exp.Rates) > 1 {
		dims = append(dims, rateString(c.Rate)+"pps")
	}
	if len(c.Exp.Priorities) > 1 {
		dims = append(dims, c.Priority)
	}
	k := c.Exp.ID + "." + metric
	if c.prefix != "" {
		k = c.prefix + "." + k
	}
	if len(dims) > 0 {
		k += "." + strings.Join(dims, ".")
	}
	return k
}

// dataShareMetric names the data experiment's share metric after the first
// data retransmission time of the timer profile: "share_gt_1.5s" for
// Berkeley.
func dataShareMetric(tp probes.TimerProfile) (string, time.Duration) {
	e1 := tp.DataRetransmits()
	if len(e1) == 0 {
		return "share_gt_" + secString(tp.DataGiveUp()) + "s", tp.DataGiveUp()
	}
	return "share_gt_" + secString(e1[0]) + "s", e1[0]
}

func secString(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }

// cellStats are the numbers of one cell that the summary, CSVs and
// reports use.
type cellStats struct {
	n, answered int
	max, mean   time.Duration
	median      time.Duration // of the answered; the mean of the middle two for an even count
	ctrlMean    time.Duration
	rtts        []time.Duration // answered only, in flow order
}

func statsOf(c Cell) cellStats {
	o := c.Outcome
	s := cellStats{n: len(o.Delays)}
	var sum time.Duration
	for i, d := range o.Delays {
		if !o.Delivered[i] {
			continue
		}
		s.answered++
		sum += d
		s.max = max(s.max, d)
		s.rtts = append(s.rtts, d)
	}
	if s.answered > 0 {
		s.mean = sum / time.Duration(s.answered)
		sorted := slices.Clone(s.rtts)
		slices.Sort(sorted)
		m := len(sorted) / 2
		s.median = sorted[m]
		if len(sorted)%2 == 0 {
			s.median = (sorted[m-1] + sorted[m]) / 2
		}
	}
	if len(o.ControllerTimes) > 0 {
		var ct time.Duration
		for _, t := range o.ControllerTimes {
			ct += t
		}
		s.ctrlMean = ct / time.Duration(len(o.ControllerTimes))
	}
	return s
}

// binShares classifies a cell's RTTs on edges, unanswered flows in the last
// bin.
func binShares(c Cell, edges []time.Duration) []float64 {
	counts := probes.Count(statsOf(c).rtts, edges)
	for _, ok := range c.Outcome.Delivered {
		if !ok {
			counts[len(edges)]++
		}
	}
	return probes.Shares(counts)
}

// dataShare is the share of a data cell's flows whose RTT reached e1 or
// that were never answered.
func dataShare(c Cell, e1 time.Duration) float64 {
	beyond := 0
	for i, d := range c.Outcome.Delays {
		if !c.Outcome.Delivered[i] || d >= e1 {
			beyond++
		}
	}
	return float64(beyond) / float64(len(c.Outcome.Delays))
}

// summarize computes every summary value of a finished run.
func summarize(r *Result) map[string][]float64 {
	v := map[string][]float64{}
	synEdges := probes.Bins(r.Timers, probes.KindSYN)
	shareName, e1 := dataShareMetric(r.Timers)
	for _, c := range r.Cells {
		s := statsOf(c)
		for _, m := range c.Exp.metrics() {
			key := cellKey(c, m)
			switch m {
			case "max_delay_s", "max_rtt_s":
				v[key] = []float64{s.max.Seconds()}
			case "mean_delay_s", "mean_rtt_s":
				v[key] = []float64{s.mean.Seconds()}
			case "median_delay_s", "median_rtt_s":
				v[key] = []float64{s.median.Seconds()}
			case "controller_mean_s":
				v[key] = []float64{s.ctrlMean.Seconds()}
			case "bins":
				v[key] = binShares(c, synEdges)
			case "share":
				v[cellKey(c, shareName)] = []float64{dataShare(c, e1)}
			}
		}
	}
	return v
}

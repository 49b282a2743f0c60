package experiments

import (
	"fmt"
	"math"
)

// Comparison says how a reproduced number is judged against the paper's.
type Comparison int

const (
	// RelTime: a time, within ±20 % of the paper's value.
	RelTime Comparison = iota
	// AbsShare: a share in 0–1, within ±0.10 (10 points).
	AbsShare
	// AtLeast: the paper states only a lower bound ("some packets exceed 75 s").
	AtLeast
)

// Tolerances fixed by issue 4: times ±20 %, shares ±10 points.
const (
	timeTolerance  = 0.20
	shareTolerance = 0.10
)

// PaperValue is one number paper 000 states, or one vector of timer-bin
// shares, with where the paper states it.
type PaperValue struct {
	// Values has one element for a scalar, four for timer bins
	// [< D1, D1–D2, D2–Dmax, ≥ Dmax].
	Values []float64
	Cmp    Comparison
	Source string
}

func scalar(v float64, c Comparison, src string) PaperValue {
	return PaperValue{[]float64{v}, c, src}
}

// JSON is the value as summary.json's "paper" object holds it: a number or
// an array of four shares.
func (p PaperValue) JSON() any {
	if len(p.Values) == 1 {
		return p.Values[0]
	}
	return p.Values
}

// Within reports whether ours (same length as Values) reproduces the
// paper's value: every element must be within tolerance.
func (p PaperValue) Within(ours []float64) bool {
	if len(ours) != len(p.Values) {
		return false
	}
	for i, v := range p.Values {
		if !p.within(v, ours[i]) {
			return false
		}
	}
	return true
}

func (p PaperValue) within(paper, ours float64) bool {
	if math.IsNaN(ours) {
		return false
	}
	switch p.Cmp {
	case RelTime:
		return math.Abs(ours-paper) <= timeTolerance*paper
	case AbsShare:
		return math.Abs(ours-paper) <= shareTolerance+1e-9
	case AtLeast:
		return ours >= paper
	}
	return false
}

// Describe renders the paper's value as the report prints it.
func (p PaperValue) Describe() string { return p.Cmp.Format(p.Values) }

// Format renders values of this kind (ours or the paper's) for the report.
func (c Comparison) Format(vs []float64) string {
	if len(vs) != 1 {
		s := ""
		for i, v := range vs {
			if i > 0 {
				s += " / "
			}
			s += fmt.Sprintf("%.1f", 100*v)
		}
		return s + " %"
	}
	switch c {
	case RelTime:
		return fmt.Sprintf("%.4g s", vs[0])
	case AbsShare:
		return fmt.Sprintf("%.1f %%", 100*vs[0])
	case AtLeast:
		return fmt.Sprintf("> %.4g s", vs[0])
	}
	return fmt.Sprint(vs[0])
}

// PaperNumbers returns every number paper 000 states that summary.json keys
// can be compared with. Table 1's per-rate means are in an image that the
// text does not repeat, so only the values quoted in the text appear.
func PaperNumbers() map[string]PaperValue {
	m := map[string]PaperValue{
		"table1.max_delay_s.1000pps":        scalar(1.4, RelTime, "§2.2 text: 400 Packet-Ins at 1 000 pps cause up to 1.4 s"),
		"table1.max_delay_s.5000pps":        scalar(1.624, RelTime, "§2.2 text / Table 1: max delay 1.624 s at 5 000 pps"),
		"table1.controller_mean_s.5000pps":  scalar(0.02538, RelTime, "Table 1: controller mean 25.38 ms at 5 000 pps (batches of 25)"),
		"fig5.max_delay_s.ascending":        scalar(9.648, RelTime, "Fig. 5: ascending priority, max 9.648 s"),
		"handshake.max_rtt_s.L3500.5000pps": scalar(105.51, RelTime, "§3.1: L = 3 500, 5 000 pps, max 105.51 s"),
		"data.share_gt_1.5s.L3500.10pps":    scalar(0.732, AbsShare, "§3.2 / Fig. 19: 73.2 % retransmitted at L = 3 500, 10 pps"),
		"data.max_rtt_s.L2500.5000pps":      scalar(75, AtLeast, "§3.2: at L = 2 500, 5 000 pps some packets exceed 75 s"),
	}
	addBins := func(key string, shares [4]float64, src string) {
		m[key] = PaperValue{shares[:], AbsShare, src}
	}
	addBins("handshake.bins.L500.10pps", [4]float64{1, 0, 0, 0}, "§3.1: L = 500, 10 pps: all RTTs < 5.8 s")
	addBins("handshake.bins.L2000.10pps", [4]float64{1, 0, 0, 0}, "§3.1: L = 2 000, 10 pps: all RTTs < 5.8 s")
	addBins("handshake.bins.L3500.10pps", [4]float64{0.90, 0.10, 0, 0}, "§3.1 / Fig. 18: L = 3 500, 10 pps: 90/10/0/0 %")
	addBins("handshake.bins.L3500.5000pps", [4]float64{0.204, 0, 0.60, 0.196}, "§3.1 / Fig. 18: L = 3 500, 5 000 pps: 20.4/0/60/19.6 %")
	return m
}

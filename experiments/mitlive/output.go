package mitlive

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Stat is a metric over the rounds: the median and the range.
type Stat struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

func stat(xs []float64) Stat {
	if len(xs) == 0 {
		return Stat{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return Stat{Median: med, Min: s[0], Max: s[n-1]}
}

// Of is the Stat of one metric of v's rounds.
func (v VariantResult) Of(metric func(Measure) float64) Stat {
	xs := make([]float64, len(v.Rounds))
	for i, m := range v.Rounds {
		xs[i] = metric(m)
	}
	return stat(xs)
}

// Metric accessors for Of.
var (
	SYNRetrans = func(m Measure) float64 { return m.SYNRetrans }
	DataRTOs   = func(m Measure) float64 { return m.DataRTOs }
	P50        = func(m Measure) float64 { return m.P50S }
	P99        = func(m Measure) float64 { return m.P99S }
)

// Cut is (reference − x) / reference on medians: 1 erases all of the
// reference's count, 0 none, negative is worse. ok is false when the
// reference has nothing to cut.
func Cut(ref, x float64) (float64, bool) {
	if !(ref > 0) {
		return 0, false
	}
	return (ref - x) / ref, true
}

// Verdict is the must-show, judged on the live numbers: a variant
// that cuts the client's SYN retransmissions and data RTOs by at least 95
// % against the reference (the first variant) with at most 10 % of the
// TCAM space lost. When the reference has no data RTOs there is nothing
// to cut: a variant without any passes that part (NoRTOs), one with some
// fails it.
type Verdict struct {
	Variant string  `json:"variant"`
	SYNCut  float64 `json:"syn_retrans_cut"`
	RTOCut  float64 `json:"data_rto_cut"`
	// SYNCutOK and RTOCutOK are false when the reference had nothing to
	// cut (the cut is then undefined and reported as 0).
	SYNCutOK bool `json:"syn_retrans_cut_defined"`
	RTOCutOK bool `json:"data_rto_cut_defined"`
	// NoRTOs: neither the reference nor the variant had a data RTO.
	NoRTOs    bool    `json:"no_data_rtos"`
	SpaceLost float64 `json:"tcam_space_lost"`
	Holds     bool    `json:"holds"`
}

// MustShowCut and MustShowSpace are the bounds.
const (
	MustShowCut   = 0.95
	MustShowSpace = 0.10
)

// Verdicts judges every variant but the reference.
func (r *Result) Verdicts() []Verdict {
	if len(r.Variants) == 0 {
		return nil
	}
	ref := r.Variants[0]
	refSYN, refRTO := ref.Of(SYNRetrans).Median, ref.Of(DataRTOs).Median
	var out []Verdict
	for _, v := range r.Variants[1:] {
		syn, rto := v.Of(SYNRetrans).Median, v.Of(DataRTOs).Median
		vd := Verdict{Variant: v.Name, SpaceLost: v.SpaceLost}
		sc, sok := Cut(refSYN, syn)
		rc, rok := Cut(refRTO, rto)
		vd.SYNCut, vd.RTOCut, vd.SYNCutOK, vd.RTOCutOK = sc, rc, sok, rok
		vd.NoRTOs = refRTO == 0 && rto == 0
		rtoOK := vd.NoRTOs || (rok && rc >= MustShowCut)
		vd.Holds = sok && sc >= MustShowCut && rtoOK && v.SpaceLost <= MustShowSpace
		out = append(out, vd)
	}
	return out
}

func fmtStat(s Stat, format string) string {
	if s.Min == s.Max {
		return fmt.Sprintf(format, s.Median)
	}
	return fmt.Sprintf(format+" ("+format+"–"+format+")", s.Median, s.Min, s.Max)
}

// Markdown is the comparison table, the verdicts and how it was run.
func (r *Result) Markdown() string {
	var b strings.Builder
	c := r.Config
	fmt.Fprintf(&b, "Live mitigation comparison: %d kernel connect()s at %g/s from host 1 to host 2 through `pseudocong switch` "+
		"(base profile %s, %d base rules, %s priorities, reactive controller), %d-byte echo after each handshake; "+
		"%d round(s), median (min–max) over rounds; kernel %s.\n\n",
		c.Flows, c.Rate, c.Profile, c.BaseLoad, c.Priority, max(c.Exchange, 0), c.Rounds, r.Kernel.Release)
	b.WriteString("| variant | SYN retx (nstat) | SYN retx cut | connects with SYN retx | handshake p50 (s) | handshake p99 (s) | data RTOs | data retx segs | server SYN-ACK retx | completed | TCAM space lost |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	var refSYN float64
	for i, v := range r.Variants {
		syn := v.Of(SYNRetrans)
		if i == 0 {
			refSYN = syn.Median
		}
		cut := "—"
		if i > 0 {
			if x, ok := Cut(refSYN, syn.Median); ok {
				cut = fmt.Sprintf("%.0f %%", 100*x)
			} else {
				cut = "n/a"
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.1f %% |\n",
			v.Name, fmtStat(syn, "%.0f"), cut,
			fmtStat(v.Of(func(m Measure) float64 { return 100 * m.RetransmittedShare }), "%.0f %%"),
			fmtStat(v.Of(P50), "%.3f"), fmtStat(v.Of(P99), "%.3f"),
			fmtStat(v.Of(DataRTOs), "%.0f"),
			fmtStat(v.Of(func(m Measure) float64 { return float64(m.DataRetransmits) }), "%.0f"),
			fmtStat(v.Of(func(m Measure) float64 { return m.ServerSYNRetrans }), "%.0f"),
			fmtStat(v.Of(func(m Measure) float64 { return 100 * min(m.ConnectedShare, exchangedOr1(m, c.Exchange)) }), "%.0f %%"),
			100*v.SpaceLost)
	}
	b.WriteString("\nMust show (a variant cuts SYN retransmissions and data RTOs by ≥ 95 % against the first row with ≤ 10 % of the TCAM lost):\n\n")
	b.WriteString("| variant | SYN retx cut | data RTO cut | TCAM space lost | holds |\n| --- | ---: | ---: | ---: | --- |\n")
	for _, vd := range r.Verdicts() {
		rto := pct(vd.RTOCut, vd.RTOCutOK)
		if vd.NoRTOs {
			rto = "none in either"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %.1f %% | %s |\n", vd.Variant, pct(vd.SYNCut, vd.SYNCutOK), rto, 100*vd.SpaceLost, yesNo(vd.Holds))
	}
	var knobs []string
	for k, v := range r.Kernel.Knobs {
		knobs = append(knobs, k+"="+v)
	}
	slices.Sort(knobs)
	fmt.Fprintf(&b, "\nKernel defaults (root namespace): %s.\n", strings.Join(knobs, ", "))
	return b.String()
}

// exchangedOr1 is m's exchanged share, or 1 when there was no exchange.
func exchangedOr1(m Measure, exchange int) float64 {
	if exchange <= 0 {
		return 1
	}
	return m.ExchangedShare
}

// pct is a cut in percent, or "n/a (reference 0)".
func pct(x float64, ok bool) string {
	if !ok {
		return "n/a (reference 0)"
	}
	return fmt.Sprintf("%.0f %%", 100*x)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// jsonDoc is the JSON output: the configuration, the kernel, every round
// and the per-variant summaries and verdicts.
type jsonDoc struct {
	Config struct {
		Profile  string   `json:"profile"`
		Variants []string `json:"variants"`
		Flows    int      `json:"flows"`
		Rate     float64  `json:"rate"`
		BaseLoad int      `json:"base_load"`
		Priority string   `json:"priority"`
		Exchange int      `json:"exchange_bytes"`
		Rounds   int      `json:"rounds"`
	} `json:"config"`
	Kernel   KernelInfo       `json:"kernel"`
	Variants []variantSummary `json:"variants"`
	Verdicts []Verdict        `json:"verdicts"`
}

type variantSummary struct {
	VariantResult
	SYNRetrans Stat `json:"syn_retrans"`
	P50S       Stat `json:"handshake_p50_s"`
	P99S       Stat `json:"handshake_p99_s"`
	DataRTOs   Stat `json:"data_rtos"`
}

// JSON is the result as one indented JSON document.
func (r *Result) JSON() ([]byte, error) {
	var d jsonDoc
	c := r.Config
	d.Config.Profile, d.Config.Variants, d.Config.Flows, d.Config.Rate = c.Profile, c.Variants, c.Flows, c.Rate
	d.Config.BaseLoad, d.Config.Priority, d.Config.Exchange, d.Config.Rounds = c.BaseLoad, c.Priority, max(c.Exchange, 0), c.Rounds
	d.Kernel = r.Kernel
	for _, v := range r.Variants {
		d.Variants = append(d.Variants, variantSummary{VariantResult: v,
			SYNRetrans: v.Of(SYNRetrans), P50S: v.Of(P50), P99S: v.Of(P99), DataRTOs: v.Of(DataRTOs)})
	}
	d.Verdicts = r.Verdicts()
	return json.MarshalIndent(d, "", "  ")
}

// Write puts mitigations-live.md and mitigations-live.json into dir and
// returns their paths.
func (r *Result) Write(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	js, err := r.JSON()
	if err != nil {
		return nil, err
	}
	md := filepath.Join(dir, "mitigations-live.md")
	jp := filepath.Join(dir, "mitigations-live.json")
	if err := os.WriteFile(md, []byte(r.Markdown()), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(jp, append(js, '\n'), 0o644); err != nil {
		return nil, err
	}
	return []string{md, jp}, nil
}

package tcpexp

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/pseudocong/pseudocong/experiments"
	"github.com/pseudocong/pseudocong/tcp"
)

// Output files besides the per-run ones.
const (
	SummaryFile     = "summary.json"
	ReportFile      = "report.md"
	MitigationsFile = "mitigations.md"
)

// WriteOutputs writes every output into dir: built in a staging
// directory beside it and renamed into place, so a failed write leaves
// nothing half-written. dir must be absent, empty or a previous run's
// outputs (it holds summary.json).
func WriteOutputs(dir string, r *Result) ([]string, error) {
	return stageOutputs(dir, func(stage string) ([]string, error) { return writeAll(stage, r) })
}

// stageOutputs fills a staging directory beside dir and renames it into
// place (WriteOutputs' contract).
func stageOutputs(dir string, fill func(stage string) ([]string, error)) ([]string, error) {
	dest, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if entries, err := os.ReadDir(dest); err == nil && len(entries) > 0 {
		if _, err := os.Stat(filepath.Join(dest, SummaryFile)); err != nil {
			return nil, fmt.Errorf("output directory %s: not empty and not a previous run's outputs (no %s)", dir, SummaryFile)
		}
	}
	stage, err := os.MkdirTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".pseudocong-")
	if err != nil {
		return nil, fmt.Errorf("output directory %s: %w", dir, err)
	}
	files, err := fill(stage)
	if err != nil {
		os.RemoveAll(stage)
		return nil, err
	}
	if err := os.RemoveAll(dest); err != nil {
		os.RemoveAll(stage)
		return nil, err
	}
	if err := os.Rename(stage, dest); err != nil {
		os.RemoveAll(stage)
		return nil, err
	}
	return files, nil
}

func writeAll(dir string, r *Result) ([]string, error) {
	o := &outputFiles{dir: dir}
	write := o.write
	if err := o.start(r.Summary(), r.writeFlows); err != nil {
		return nil, err
	}
	for _, b := range r.Runs {
		if !b.Cell.Trace || b.Mitigation != r.firstMitigation() || b.Outcome == nil {
			continue
		}
		base := fmt.Sprintf("%s_%s_%s_cwnd", b.Cell.ID, b.Timers, b.Role)
		sw := r.switchName(b)
		traces := b.Outcome.TCP.Traces
		if err := writeTraces(write, base, fmt.Sprintf("%s: cwnd of %d bulk flows, %s timers, %s", b.Cell.ID, len(traces), b.Timers, sw), traces); err != nil {
			return nil, err
		}
	}
	if len(r.Spec.Mitigations) > 0 {
		if err := write("mitigations.csv", r.writeMitigationsCSV); err != nil {
			return nil, err
		}
		if err := write("mitigations.png", r.writeMitigationsPlot); err != nil {
			return nil, err
		}
		if err := write(MitigationsFile, r.writeMitigations); err != nil {
			return nil, err
		}
	}
	if err := write(ReportFile, r.writeReport); err != nil {
		return nil, err
	}
	return o.files, nil
}

// outputFiles writes a run's files into dir, keeping their names in the
// order written (the list WriteOutputs returns).
type outputFiles struct {
	dir   string
	files []string
}

func (o *outputFiles) write(name string, f func(w io.Writer) error) error {
	var b bytes.Buffer
	if err := f(&b); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	o.files = append(o.files, name)
	return os.WriteFile(filepath.Join(o.dir, name), b.Bytes(), 0o644)
}

// start writes the two files every run begins with: summary.json and
// flows.csv.
func (o *outputFiles) start(s experiments.Summary, flows func(io.Writer) error) error {
	sum, err := experiments.MarshalSummary(s)
	if err != nil {
		return err
	}
	if err := o.write(SummaryFile, func(w io.Writer) error { _, err := w.Write(sum); return err }); err != nil {
		return err
	}
	return o.write("flows.csv", flows)
}

// switchName is the switch a bulk run went through: the profile's or the
// reference's.
func (r *Result) switchName(b BulkRun) string {
	if b.Role == RoleReference {
		return r.Reference.Name
	}
	return r.Profile.Name
}

// writeTraces writes base.csv (tcp.WriteCSV) and base.png (every flow's
// cwnd against time) through write.
func writeTraces(write func(string, func(io.Writer) error) error, base, title string, traces []*tcp.Trace) error {
	if err := write(base+".csv", func(w io.Writer) error { return tcp.WriteCSV(w, traces) }); err != nil {
		return err
	}
	p, err := tcp.PlotSeries(title, "cwnd (segments)", traces, func(s tcp.Sample) float64 { return float64(s.Cwnd) })
	if err != nil {
		return err
	}
	p.Legend.Top = false
	p.Legend = plot.NewLegend() // dozens of flows: no legend
	return write(base+".png", func(w io.Writer) error { return tcp.WritePNG(w, p) })
}

func (r *Result) firstMitigation() string {
	if len(r.Spec.Mitigations) > 0 {
		return r.Spec.Mitigations[0]
	}
	return BaselineName
}

// Summary is summary.json, in package experiments' format (no paper
// numbers: the paper states none for these keys).
func (r *Result) Summary() experiments.Summary {
	s := experiments.Summary{Spec: r.Spec.Name, Backend: "sim", Profile: r.Profile.Name, Seed: r.Seed,
		WallSeconds: math.Round(r.Wall.Seconds()*1000) / 1000, Results: map[string]any{}, Paper: map[string]any{}}
	for k, v := range r.Values {
		if len(v) == 1 {
			s.Results[k] = round12(v[0])
		} else {
			s.Results[k] = v
		}
	}
	return s
}

func round12(x float64) any {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil // JSON has no NaN: a ratio with a zero reference
		}
		return x
	}
	p := math.Pow(10, 11-math.Floor(math.Log10(math.Abs(x))))
	return math.Round(x*p) / p
}

func (r *Result) writeFlows(w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"cell", "timers", "switch", "mitigation", "flow", "established", "goodput_mbps", "received_bytes",
		"timeouts", "syn_retrans", "retrans_segs", "spurious_rtos", "loss_undo", "time_cwnd1_s", "share_cwnd1"})
	for _, b := range r.Runs {
		if b.Outcome == nil {
			continue
		}
		sw := r.switchName(b)
		for i, f := range b.Outcome.TCP.Flows {
			st := f.Sender
			_ = cw.Write([]string{b.Cell.ID, b.Timers, sw, b.Mitigation, strconv.Itoa(i), strconv.FormatBool(f.Established),
				fmt.Sprintf("%.6f", f.GoodputBps()/1e6), strconv.FormatUint(f.Received, 10),
				strconv.FormatUint(st.TCPTimeouts, 10), strconv.FormatUint(st.TCPSynRetrans, 10), strconv.FormatUint(st.RetransSegs, 10),
				strconv.FormatUint(st.TCPSpuriousRTOs, 10), strconv.FormatUint(st.TCPLossUndo, 10),
				fmt.Sprintf("%.6f", f.TimeCwnd1.Seconds()), fmt.Sprintf("%.6f", f.ShareCwnd1)})
		}
	}
	cw.Flush()
	return cw.Error()
}

func fmtVal(v []float64, ok bool) string {
	if !ok || len(v) == 0 {
		return "–"
	}
	if math.IsNaN(v[0]) {
		return "n/a"
	}
	return strconv.FormatFloat(v[0], 'g', 4, 64)
}

func (r *Result) writeReport(w io.Writer) error {
	s := r.Spec
	fmt.Fprintf(w, "# %s\n\n%s\n\n", s.Name, strings.TrimSpace(s.Description))
	fmt.Fprintf(w, "Switch %s against %s; topology %s; %v per run; seed %d; wall %.1f s.\n\n",
		r.Profile.Name, r.Reference.Name, s.Topology, s.Duration, r.Seed, r.Wall.Seconds())
	for _, c := range s.Cells {
		fmt.Fprintf(w, "## %s — %s\n\n%d bulk flows starting at %g/s; TCAM %s; base load %d; %s priorities.\n\n",
			c.ID, c.Title, c.Flows, c.StartRate, capString(c.TCAMCapacity, r.Profile.TCAM.Capacity), c.BaseLoad, c.Priority)
		fmt.Fprintf(w, "| timers | goodput %s (Mbit/s) | goodput %s | ratio | timeouts/flow %s | %s | SYN retx/flow %s | %s | share at cwnd 1 %s | %s |\n",
			r.Profile.Name, r.Reference.Name, r.Profile.Name, r.Reference.Name, r.Profile.Name, r.Reference.Name, r.Profile.Name, r.Reference.Name)
		fmt.Fprintf(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
		for _, t := range s.Timers {
			p, ref := r.find(c.ID, t, RoleProfile, r.firstMitigation()), r.find(c.ID, t, RoleReference, "")
			if p == nil || ref == nil {
				continue
			}
			pm, rm := metricsOf(p.Outcome), metricsOf(ref.Outcome)
			fmt.Fprintf(w, "| %s | %.2f | %.2f | %.3f | %.2f | %.2f | %.2f | %.2f | %.4f | %.4f |\n", t, pm.goodputMbps, rm.goodputMbps,
				ratio(pm.goodputMbps, rm.goodputMbps), pm.timeouts, rm.timeouts, pm.synRetrans, rm.synRetrans, pm.cwnd1, rm.cwnd1)
		}
		fmt.Fprintln(w)
		if c.Trace {
			fmt.Fprintf(w, "cwnd traces: `%s_<timers>_profile_cwnd.{csv,png}` and `%s_<timers>_reference_cwnd.{csv,png}`.\n\n", c.ID, c.ID)
		}
	}
	fmt.Fprintf(w, "## Summary keys\n\n| key | value |\n| --- | ---: |\n")
	for _, k := range sortedKeys(r.Values) {
		fmt.Fprintf(w, "| `%s` | %s |\n", k, fmtVal(r.Values[k], true))
	}
	return nil
}

func capString(c, def int) string {
	if c > 0 {
		return fmt.Sprintf("scaled to %d entries", c)
	}
	return fmt.Sprintf("of %d entries", def)
}

// mitigationKeys are the columns of the mitigations table.
var mitigationKeys = []struct{ key, label string }{
	{"handshake.syn_retx_share.L3500.10pps", "SYN retx share L3500 10pps"},
	{"handshake.syn_retx_share.L3500.5000pps", "SYN retx share L3500 5000pps"},
	{"data.share_gt_1.5s.L3500.10pps", "data RTO share L3500 10pps"},
	{"fig5.max_delay_s", "Fig. 5 max delay (s)"},
	{"table1.max_delay_s.5000pps", "Table 1 max delay 5000pps (s)"},
}

// Verdict is one mitigation against the must-show bound.
type Verdict struct {
	Name string
	// Cut is the reduction against the baseline per measure (1: erased).
	Cut       map[string]float64
	MinCut    float64
	SpaceLost float64
	Pass      bool
	Single    bool
}

// cutMeasures are the pseudo-congestion measures the must-show bound is
// on: SYN retransmissions and data RTOs at the probe cells and in every
// bulk cell (for the first timer profile).
func (r *Result) cutMeasures() []string {
	ms := []string{"handshake.syn_retx_share.L3500.10pps", "handshake.syn_retx_share.L3500.5000pps", "data.share_gt_1.5s.L3500.10pps"}
	for _, c := range r.Spec.Cells {
		ms = append(ms, c.ID+".syn_retrans_per_flow"+r.timerSuffix(), c.ID+".timeouts_per_flow"+r.timerSuffix())
	}
	return ms
}

// timerSuffix is the key part of the first timer profile ("" with one).
func (r *Result) timerSuffix() string {
	if len(r.Spec.Timers) > 1 {
		return "." + r.Spec.Timers[0]
	}
	return ""
}

// Verdicts evaluates every mitigation: the cut of each measure, the
// smallest cut, and whether it is ≥ 95 % with ≤ 10 % of the TCAM lost.
// The cut is the share of the pseudo-congestion erased: of the baseline's
// excess over the floor, the part the mitigation removes,
// (baseline − mitigated) / (baseline − floor). The floor of a probe cell
// is 0; of a bulk cell the same flows through the reference (ideal)
// switch, whose timeouts are real congestion, not pseudo-congestion. A
// measure whose baseline is at the floor counts as cut when the
// mitigation stays there.
func (r *Result) Verdicts() []Verdict {
	var out []Verdict
	base := "mitigation." + BaselineName + "."
	for _, mr := range r.Mitigation {
		name := mr.Mitigation.Name
		if name == BaselineName {
			continue
		}
		v := Verdict{Name: name, Cut: map[string]float64{}, MinCut: math.Inf(1), SpaceLost: mr.SpaceLost, Single: !strings.Contains(name, "+")}
		for _, m := range r.cutMeasures() {
			b, ok1 := r.Values[base+m]
			x, ok2 := r.Values["mitigation."+name+"."+m]
			if !ok1 || !ok2 {
				continue
			}
			floor := 0.0
			if cell, metric, ok := strings.Cut(m, "."); ok && !strings.HasPrefix(m, "handshake.") && !strings.HasPrefix(m, "data.") {
				if f, ok := r.Values[base+cell+".ref."+metric]; ok {
					floor = f[0]
				}
			}
			cut := 1.0
			switch {
			case b[0] > floor:
				cut = (b[0] - x[0]) / (b[0] - floor)
			case x[0] > floor:
				cut = math.Inf(-1)
			}
			v.Cut[m] = cut
			v.MinCut = min(v.MinCut, cut)
		}
		v.Pass = v.MinCut >= 0.95 && v.SpaceLost <= 0.10
		out = append(out, v)
	}
	return out
}

func (r *Result) writeMitigationsCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	keys := []string{}
	for _, k := range mitigationKeys {
		keys = append(keys, k.key)
	}
	for _, c := range r.Spec.Cells {
		for _, m := range []string{"syn_retrans_per_flow", "timeouts_per_flow", "goodput_ratio", "share_time_cwnd1"} {
			keys = append(keys, c.ID+"."+m+r.timerSuffix())
		}
	}
	keys = append(keys, "tcam_space_lost", "switch_cpu_s")
	_ = cw.Write(append([]string{"mitigation"}, keys...))
	for _, mr := range r.Mitigation {
		row := []string{mr.Mitigation.Name}
		for _, k := range keys {
			v, ok := r.Values["mitigation."+mr.Mitigation.Name+"."+k]
			row = append(row, fmtVal(v, ok))
		}
		_ = cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

func (r *Result) writeMitigations(w io.Writer) error {
	s := r.Spec
	fmt.Fprintf(w, "# Mitigations of pseudo-congestion (%s)\n\n%s\n\n", s.Name, strings.TrimSpace(s.Description))
	fmt.Fprintf(w, "Baseline: %s. Probe cells: %s (paper 000's worst cells; Berkeley timers classify the RTTs). "+
		"Bulk cells: %s; %v, timers %s. A mitigation that only changes TCP leaves the switch as it is: its probe "+
		"cells are the baseline's (the probes have fixed timers by construction); its effect is in the bulk cells.\n\n",
		r.Profile.Name, s.ProbeCells, cellList(s), s.Duration, strings.Join(s.Timers, ", "))
	cm := r.cutMeasures()
	fmt.Fprintf(w, "| mitigation | SYN retx L3500 10pps | SYN retx L3500 5000pps | data RTO share L3500 10pps | Fig. 5 max delay (s) | Table 1 max delay (s) |")
	sep := "| --- | ---: | ---: | ---: | ---: | ---: |"
	for _, c := range s.Cells {
		fmt.Fprintf(w, " %s SYN retx/flow | %s RTOs/flow | %s goodput ratio | %s share at cwnd 1 |", c.ID, c.ID, c.ID, c.ID)
		sep += " ---: | ---: | ---: | ---: |"
	}
	fmt.Fprintf(w, " TCAM space lost | switch CPU (s) |\n%s ---: | ---: |\n", sep)
	for _, mr := range r.Mitigation {
		p := "mitigation." + mr.Mitigation.Name + "."
		get := func(k string) string { v, ok := r.Values[p+k]; return fmtVal(v, ok) }
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |", mr.Mitigation.Name,
			get(mitigationKeys[0].key), get(mitigationKeys[1].key), get(mitigationKeys[2].key), get(mitigationKeys[3].key), get(mitigationKeys[4].key))
		for _, c := range s.Cells {
			for _, m := range []string{"syn_retrans_per_flow", "timeouts_per_flow", "goodput_ratio", "share_time_cwnd1"} {
				fmt.Fprintf(w, " %s |", get(c.ID+"."+m+r.timerSuffix()))
			}
		}
		fmt.Fprintf(w, " %.1f %% | %s |\n", 100*mr.SpaceLost, get("switch_cpu_s"))
	}
	fmt.Fprintf(w, "\nThe reference (%s) through the same bulk cells:", r.Reference.Name)
	for _, c := range s.Cells {
		get := func(m string) string {
			v, ok := r.Values["mitigation."+BaselineName+"."+c.ID+".ref."+m+r.timerSuffix()]
			return fmtVal(v, ok)
		}
		fmt.Fprintf(w, " %s: %s SYN retx/flow, %s RTOs/flow, %s at cwnd 1;", c.ID, get("syn_retrans_per_flow"), get("timeouts_per_flow"), get("share_time_cwnd1"))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "\nMemory: every layout keeps the TCAM's %d slots; hermes reserves its shadow slice out of them (the space lost). "+
		"CPU time is the switch's local CPU (Packet-In builds and TCAM driver work) summed over the bulk runs.\n\n", r.Profile.TCAM.Capacity)
	fmt.Fprintf(w, "## Must show: a cut of at least 95 %% with at most 10 %% TCAM space lost\n\n")
	fmt.Fprintf(w, "Measures: %s. Cut = (baseline − mitigated) / (baseline − floor), the share of the pseudo-congestion erased; "+
		"the floor is 0 for the probe cells and the reference switch's value for the bulk cells (its timeouts are real congestion); "+
		"a measure at its floor in the baseline counts as cut when it stays there.\n\n", "`"+strings.Join(cm, "`, `")+"`")
	fmt.Fprintf(w, "| mitigation | smallest cut | space lost | passes |\n| --- | ---: | ---: | --- |\n")
	var pass, single []string
	for _, v := range r.Verdicts() {
		fmt.Fprintf(w, "| %s | %s | %.1f %% | %v |\n", v.Name, pct(v.MinCut), 100*v.SpaceLost, v.Pass)
		if v.Pass {
			pass = append(pass, v.Name)
			if v.Single {
				single = append(single, v.Name)
			}
		}
	}
	fmt.Fprintln(w)
	if len(pass) == 0 {
		fmt.Fprintf(w, "**No mitigation of this run reaches the bound.**\n\n")
	} else {
		fmt.Fprintf(w, "**Passing: %s.** ", strings.Join(pass, ", "))
		if len(single) == 0 {
			fmt.Fprintf(w, "No single mitigation passes alone.\n\n")
		} else {
			fmt.Fprintf(w, "Single mitigations that pass alone: %s.\n\n", strings.Join(single, ", "))
		}
	}
	fmt.Fprintf(w, "Plot: `mitigations.png` (each measure relative to the baseline). Numbers: `mitigations.csv`, `summary.json`.\n")
	return nil
}

func cellList(s *Spec) string {
	var parts []string
	for _, c := range s.Cells {
		parts = append(parts, fmt.Sprintf("%s (%s, %d flows)", c.ID, c.Title, c.Flows))
	}
	return strings.Join(parts, ", ")
}

func pct(x float64) string {
	if math.IsInf(x, -1) {
		return "worse (baseline 0)"
	}
	if math.IsInf(x, 1) {
		return "–"
	}
	return fmt.Sprintf("%.1f %%", 100*x)
}

// plotCap caps the bars of mitigations.png: a mitigation that makes a
// measure six times worse would flatten every other bar.
const plotCap = 2.0

// writeMitigationsPlot draws, per mitigation, each cut measure as a share
// of the baseline's (bars; 0 = erased, 1 = unchanged).
func (r *Result) writeMitigationsPlot(w io.Writer) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Pseudo-congestion left, relative to the baseline (0: erased; bars capped at %g)", plotCap)
	p.Y.Label.Text = "mitigated / baseline"
	ms := r.cutMeasures()
	vs := r.Verdicts()
	width := vg.Points(4)
	var names []string
	for _, v := range vs {
		names = append(names, v.Name)
	}
	for i, m := range ms {
		vals := make(plotter.Values, len(vs))
		for j, v := range vs {
			left := 1.0 // a measure not in the run, or worse than a baseline at 0: drawn as unchanged
			if c, ok := v.Cut[m]; ok && !math.IsInf(c, 0) {
				left = math.Max(0, 1-c)
			}
			vals[j] = math.Min(left, plotCap)
		}
		b, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return err
		}
		b.Offset = width * vg.Length(i-len(ms)/2)
		b.Color = plotColor(i)
		b.LineStyle.Width = 0
		p.Add(b)
		p.Legend.Add(m, b)
	}
	p.Legend.Top = true
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = 0.8
	p.X.Tick.Label.XAlign = -1
	p.Add(plotter.NewGrid())
	wt, err := p.WriterTo(vg.Length(max(8, len(names)/2+4))*vg.Inch, 6*vg.Inch, "png")
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}

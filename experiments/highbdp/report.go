package highbdp

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Paper 002's numbers (PAPERS.md).
var paperUtil = map[string]float64{"100M": 0.88, "622M": 0.83, "10G": 0.40}

const (
	paperSlowStartEnd = 1.455
	paperPeakS        = 26*60 + 54
	paperRecoveryS    = 28*60 + 12
	paperGrowthDelack = 48.54
	paperGrowthPred   = 24.35
)

// Analytic is §1's standard example: 1 500 B packets, 100 ms RTT,
// 10 Gbit/s. The window is the BDP in packets; the loss rate the
// response function W = 1.2/√p allows (RFC 3649 §1); the time between
// congestion events 1/(p · packets per second).
func Analytic() (window, lossEvery, eventHours float64) {
	window = 10e9 * 0.1 / 8 / 1500
	p := math.Pow(1.2/window, 2)
	pps := 10e9 / 8 / 1500
	return window, 1 / p, 1 / (p * pps) / 3600
}

// LongFlow is what flow 0's trace says.
type LongFlow struct {
	PeakCwnd  uint32
	PeakS     float64 // time of the first sample at the run's largest window
	RecoveryS float64 // first reduction after the peak → back at the window before it; -1: not within the run
}

// AnalyseLong reads a trace.
func AnalyseLong(tr []Point) LongFlow {
	lf := LongFlow{RecoveryS: -1}
	for _, p := range tr {
		if p.Cwnd > lf.PeakCwnd {
			lf.PeakCwnd, lf.PeakS = p.Cwnd, p.T
		}
	}
	var before uint32
	var from float64 = -1
	for i := 1; i < len(tr); i++ {
		if tr[i].T <= lf.PeakS {
			continue
		}
		if from < 0 && tr[i].Cwnd < tr[i-1].Cwnd {
			before, from = tr[i-1].Cwnd, tr[i-1].T
			continue
		}
		if from >= 0 && tr[i].Cwnd >= before {
			lf.RecoveryS = tr[i].T - from
			break
		}
	}
	return lf
}

// Growth is the time the window took from 65 535 B to target bytes in
// a fine trace (-1: it did not get there).
func Growth(tr []Point, mss, fromBytes, target int) float64 {
	t0 := -1.0
	for _, p := range tr {
		b := int(p.Cwnd) * mss
		if t0 < 0 && b >= fromBytes {
			t0 = p.T
		}
		if t0 >= 0 && b >= target {
			return p.T - t0
		}
	}
	return -1
}

func key(parts ...string) string { return "highbdp." + strings.Join(parts, ".") }

func bufKey(f float64) string { return strings.ReplaceAll(fmt.Sprintf("%g", f), ".", "_") }

// Summary is the spec's numbers by key (the summary.json contract).
func Summary(s *Spec, rs []CellResult) map[string]float64 {
	m := map[string]float64{}
	sum, good, cnt := map[string]float64{}, map[string]float64{}, map[string]float64{}
	var events, wall, cpu float64
	for _, r := range rs {
		o := r.Outcome
		events += float64(o.Events)
		wall += o.WallS
		cpu += o.CPUS
		switch r.Cell.Kind {
		case "grid":
			k := r.Cell.CC + "." + r.Cell.Bottleneck
			sum[k] += o.Utilisation
			good[k] += o.Goodput
			cnt[k]++
			if r.Cell.CC == s.Algorithms[0] && r.Cell.Seed == s.Seeds[0] {
				m[key("buffer", bufKey(r.Cell.Buffer), r.Cell.Bottleneck)] = o.Utilisation
				m[key("perf", "events_per_s", r.Cell.Bottleneck)] = float64(o.Events) / o.WallS
				m[key("perf", "sim_s_per_wall_s", r.Cell.Bottleneck)] = s.Duration.Seconds() / s.Scale / o.WallS
				if o.CPUS > 0 {
					m[key("perf", "events_per_cpu_s", r.Cell.Bottleneck)] = float64(o.Events) / o.CPUS
					m[key("perf", "sim_s_per_cpu_s", r.Cell.Bottleneck)] = s.Duration.Seconds() / s.Scale / o.CPUS
				}
			}
			if r.Cell.CC == NS2Reno && r.Cell.Seed == s.Seeds[0] && r.Cell.Bottleneck == s.Bottlenecks[len(s.Bottlenecks)-1] {
				m[key("long_flow", "slow_start_end_s")] = o.SlowStartEnd
				lf := AnalyseLong(o.Trace)
				m[key("long_flow", "peak_s")] = lf.PeakS
				m[key("long_flow", "peak_cwnd")] = float64(lf.PeakCwnd)
				m[key("long_flow", "recovery_s")] = lf.RecoveryS
			}
		case "buffer":
			m[key("buffer", bufKey(r.Cell.Buffer), r.Cell.Bottleneck)] = o.Utilisation
		case "growth":
			name := "nodelack"
			if r.Cell.DelAck {
				name = "delack"
			}
			m[key("long_flow", "growth_s", name)] = Growth(o.Fine, s.MSS, s.SsthreshBytes, s.GrowthTargetBytes)
			m[key("long_flow", "growth_predicted_s")] = float64(s.GrowthTargetBytes-s.SsthreshBytes) * r.RTTms / 1e3 / float64(s.MSS)
			if r.Cell.DelAck {
				m[key("long_flow", "growth_slow_start_end_s")] = o.SlowStartEnd
			}
		}
	}
	for k, v := range sum {
		u := v / cnt[k]
		m[key("utilisation", k)] = u
		m[key("goodput", k)] = good[k] / cnt[k]
		if cc, bw, _ := strings.Cut(k, "."); cc == NS2Reno {
			m[key("utilisation", bw)] = u
		}
	}
	w, l, h := Analytic()
	m[key("analytic", "window_segments")] = w
	m[key("analytic", "packets_per_loss")] = l
	m[key("analytic", "hours_per_event")] = h
	if wall > 0 {
		m[key("perf", "events_per_s")] = events / wall
		m[key("perf", "events")] = events
		m[key("perf", "wall_s")] = wall
	}
	if cpu > 0 {
		m[key("perf", "events_per_cpu_s")] = events / cpu
		m[key("perf", "cpu_s")] = cpu
	}
	return m
}

// WriteOutputs writes summary.json, report.md, series.json and the
// figures into dir.
func WriteOutputs(dir string, s *Spec, rs []CellResult) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	sum := Summary(s, rs)
	var files []string
	write := func(name string, b []byte) error {
		files = append(files, name)
		return os.WriteFile(filepath.Join(dir, name), b, 0o644)
	}
	b, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := write("summary.json", b); err != nil {
		return nil, err
	}
	if b, err = json.Marshal(rs); err != nil {
		return nil, err
	}
	if err := write("cells.json", b); err != nil {
		return nil, err
	}
	if err := write("report.md", []byte(Report(s, sum, rs))); err != nil {
		return nil, err
	}
	for name, p := range Figures(s, rs) {
		wt, err := p.WriterTo(7*vg.Inch, 4.2*vg.Inch, "png")
		if err != nil {
			return nil, err
		}
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		_, err = wt.WriteTo(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
		files = append(files, name)
	}
	sort.Strings(files)
	return files, nil
}

// Report is report.md: ours beside the paper's.
func Report(s *Spec, sum map[string]float64, rs []CellResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\nScale 1/%g: rates and duration (%v) divided by %g; RTT %s.\n\n", s.Name, s.Scale, s.Duration, s.Scale, fmtRTT(rs))
	fmt.Fprintf(&b, "## Utilisation of L (DropTail buffer %g BDP)\n\nLink utilisation (all bytes L delivered, retransmissions and headers included, as ns-2's link monitor counts) and, in brackets, goodput (payload delivered in order to the sinks).\n\n| bottleneck | paper (ns-2 NewReno) |", s.Buffer)
	for _, a := range s.Algorithms {
		fmt.Fprintf(&b, " %s |", a)
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(s.Algorithms)) + "\n")
	for _, bw := range s.Bottlenecks {
		p := "—"
		if v, ok := paperUtil[bw]; ok {
			p = fmt.Sprintf("%.0f %%", v*100)
		}
		fmt.Fprintf(&b, "| %s | %s |", bw, p)
		for _, a := range s.Algorithms {
			fmt.Fprintf(&b, " %s (%s) |", pct(sum, key("utilisation", a, bw)), pct(sum, key("goodput", a, bw)))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\n## Buffer sensitivity (%s)\n\n| buffer (× BDP) |", s.Algorithms[0])
	for _, bw := range s.Bottlenecks {
		fmt.Fprintf(&b, " %s |", bw)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(s.Bottlenecks)) + "\n")
	fr := append([]float64{}, s.BufferSweep...)
	if !containsF(fr, s.Buffer) {
		fr = append(fr, s.Buffer)
	}
	sort.Float64s(fr)
	for _, f := range fr {
		fmt.Fprintf(&b, "| %g |", f)
		for _, bw := range s.Bottlenecks {
			fmt.Fprintf(&b, " %s |", pct(sum, key("buffer", bufKey(f), bw)))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n## The long flow\n\n| | paper | ours |\n|---|---|---|\n")
	row := func(name string, paper string, k string, unit string) {
		v, ok := sum[k]
		o := "—"
		if ok {
			o = fmt.Sprintf("%.3f%s", v, unit)
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", name, paper, o)
	}
	row("slow start ends (s, grid cell at the largest L)", fmt.Sprint(paperSlowStartEnd), key("long_flow", "slow_start_end_s"), "")
	row("slow start ends (s, alone at the growth bottleneck)", fmt.Sprint(paperSlowStartEnd), key("long_flow", "growth_slow_start_end_s"), "")
	row("time to the window's peak (s)", fmt.Sprint(paperPeakS), key("long_flow", "peak_s"), "")
	row("recovery after repeated halving (s; -1: not within the run)", fmt.Sprint(paperRecoveryS), key("long_flow", "recovery_s"), "")
	row("growth 65 535 → 377 410 B predicted (s)", fmt.Sprint(paperGrowthPred), key("long_flow", "growth_predicted_s"), "")
	row("growth with delayed ACKs (s)", fmt.Sprint(paperGrowthDelack), key("long_flow", "growth_s", "delack"), "")
	row("growth without delayed ACKs (s)", "(≈ predicted)", key("long_flow", "growth_s", "nodelack"), "")
	w, l, h := Analytic()
	fmt.Fprintf(&b, "\n## §1's example\n\n10 Gbit/s, 100 ms, 1 500 B: window %.0f segments (paper 83 333), one loss per %.3g packets (paper 5·10⁹), a congestion event every %.2f h (paper 1.6 h).\n", w, l, h)
	b.WriteString("\n## Simulator speed (noisy: a shared 2-core machine)\n\n| cell | events | wall s | CPU s | events per CPU s | simulated s per CPU s |\n|---|---|---|---|---|---|\n")
	for _, r := range rs {
		o := r.Outcome
		simS := s.Duration.Seconds() / s.Scale
		if r.Cell.Kind == "growth" {
			simS = s.GrowthDuration.Seconds()
		}
		fmt.Fprintf(&b, "| %s | %d | %.1f | %.1f | %.3g | %.3g |\n", r.Cell.Label(), o.Events, o.WallS, o.CPUS, float64(o.Events)/max(o.CPUS, 1e-9), simS/max(o.CPUS, 1e-9))
	}
	return b.String()
}

func fmtRTT(rs []CellResult) string {
	if len(rs) == 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f ms", rs[0].RTTms)
}

func containsF(xs []float64, v float64) bool {
	for _, x := range xs {
		if x == v {
			return true
		}
	}
	return false
}

// fractionAxisMax is the top of a utilisation axis whose legend of n
// entries sits at the top: a band above 1 for the legend, because
// utilisation spends most of a run near 1, right where a legend inside
// the axes would cover it.
func fractionAxisMax(n int) float64 { return 1.05 + 0.08*float64(n) }

func pct(m map[string]float64, k string) string {
	v, ok := m[k]
	if !ok {
		return "—"
	}
	return fmt.Sprintf("%.1f %%", v*100)
}

// Figures are the paper's: L's utilisation over time at the largest L
// (Fig. 3), the long flow's window over the run and its first seconds
// (Figs. 4–5), data segments sent and ACKed over its first seconds
// (Figs. 6–7), utilisation against the buffer.
func Figures(s *Spec, rs []CellResult) map[string]*plot.Plot {
	figs := map[string]*plot.Plot{}
	top := s.Bottlenecks[len(s.Bottlenecks)-1]
	newPlot := func(title, x, y string) *plot.Plot {
		p := plot.New()
		p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, x, y
		p.Legend.Top = true
		p.Add(plotter.NewGrid())
		return p
	}
	line := func(p *plot.Plot, name string, i int, xys plotter.XYs) {
		if len(xys) == 0 {
			return
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1)
		p.Add(l)
		p.Legend.Add(name, l)
	}
	util := newPlot(fmt.Sprintf("Utilisation of L = %s (scale 1/%g)", top, s.Scale), "time (s)", "utilisation")
	hour := newPlot(fmt.Sprintf("Long flow's window, L = %s", top), "time (s)", "cwnd (segments)")
	fine := newPlot(fmt.Sprintf("Long flow's window, first %v, L = %s", s.FineFor, top), "time (s)", "cwnd (segments)")
	sent := newPlot(fmt.Sprintf("Long flow: data sent vs ACKed, first %v, L = %s", s.FineFor, top), "time (s)", "segments")
	for i, a := range s.Algorithms {
		for _, r := range rs {
			if r.Cell.Kind != "grid" || r.Cell.CC != a || r.Cell.Bottleneck != top || r.Cell.Seed != s.Seeds[0] {
				continue
			}
			o := r.Outcome
			every := float64(s.UtilEvery) / 1e9 / s.Scale
			var u, h, f, sn, ak plotter.XYs
			for j, v := range o.Util {
				u = append(u, plotter.XY{X: float64(j+1) * every, Y: v})
			}
			for _, p := range o.Trace {
				h = append(h, plotter.XY{X: p.T, Y: float64(p.Cwnd)})
			}
			for _, p := range o.Fine {
				f = append(f, plotter.XY{X: p.T, Y: float64(p.Cwnd)})
				if a == s.Algorithms[0] {
					sn = append(sn, plotter.XY{X: p.T, Y: float64(p.Sent)})
					ak = append(ak, plotter.XY{X: p.T, Y: float64(p.Acked)})
				}
			}
			line(util, a, i, u)
			line(hour, a, i, h)
			line(fine, a, i, f)
			if a == s.Algorithms[0] {
				line(sent, a+" sent", 0, sn)
				line(sent, a+" ACKed", 1, ak)
			}
		}
	}
	util.Y.Min, util.Y.Max = 0, fractionAxisMax(len(s.Algorithms))
	figs["highbdp_util_"+top+".png"] = util
	figs["highbdp_cwnd_run.png"] = hour
	figs["highbdp_cwnd_first.png"] = fine
	figs["highbdp_sent_acked_first.png"] = sent
	fr := append([]float64{}, s.BufferSweep...)
	if !containsF(fr, s.Buffer) {
		fr = append(fr, s.Buffer)
	}
	if len(fr) < 2 {
		return figs // no sweep: nothing to draw on a log axis
	}
	sort.Float64s(fr)
	buf := newPlot("Utilisation vs DropTail buffer ("+s.Algorithms[0]+")", "buffer (× BDP)", "utilisation")
	buf.X.Scale = plot.LogScale{}
	buf.X.Tick.Marker = plot.LogTicks{}
	sum := Summary(s, rs)
	for i, bw := range s.Bottlenecks {
		var xys plotter.XYs
		for _, f := range fr {
			if v, ok := sum[key("buffer", bufKey(f), bw)]; ok {
				xys = append(xys, plotter.XY{X: f, Y: v})
			}
		}
		line(buf, bw, i, xys)
		if sc, err := plotter.NewScatter(xys); err == nil && len(xys) > 0 {
			sc.Color = plotutil.Color(i)
			buf.Add(sc)
		}
	}
	buf.Y.Min, buf.Y.Max = 0, fractionAxisMax(len(s.Bottlenecks))
	figs["highbdp_buffer.png"] = buf
	return figs
}

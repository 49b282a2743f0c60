package calibrate

import (
	"encoding/json"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

var patternColor = map[string]color.RGBA{
	PatternAscending:  {R: 200, G: 30, B: 30, A: 255},
	PatternDescending: {R: 30, G: 90, B: 200, A: 255},
	PatternConstant:   {R: 30, G: 150, B: 60, A: 255},
	PatternRandom:     {R: 150, G: 100, B: 20, A: 255},
}

// WriteReport writes report.md and its plots into dir: insert cost per
// rule against occupancy (measured batches vs the fitted model, per
// pattern), Packet-In arrivals of the burst against the fitted rate, and
// the cache probe's per-rule delays.
func WriteReport(dir string, res *Result, f Fits, profileYAML []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	var plots []string
	save := func(p *plot.Plot, name string) error {
		if err := p.Save(7*vg.Inch, 4.2*vg.Inch, filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("report: plot %s: %w", name, err)
		}
		plots = append(plots, name)
		return nil
	}
	if f.Insert != nil && len(res.Batches) > 0 {
		if err := save(insertPlot(res, *f.Insert), "inserts.png"); err != nil {
			return err
		}
	}
	if f.Burst != nil {
		if err := save(burstPlot(res, *f.Burst), "packetin_burst.png"); err != nil {
			return err
		}
	}
	if len(res.Cache) > 0 {
		if err := save(cachePlot(res, f), "cache.png"); err != nil {
			return err
		}
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("# Calibration of %s", res.Switch)
	w("")
	w("%s, %v, switch %q, data ports %d -> %d.", res.Started.UTC().Format(time.RFC3339), res.Elapsed.Round(time.Second), strings.TrimSpace(res.Desc), res.InPort, res.OutPort)
	if res.Partial {
		w("")
		w("**PARTIAL: %s**", res.StopReason)
	}
	w("")
	w("Clean-up: %d calibrate rules removed, %d left over, %d of the switch's own %d rules changed (verified: %v). %s",
		res.Cleanup.Deleted, res.Cleanup.Leftover, res.Cleanup.Changed, res.Foreign, res.Cleanup.Verified, res.Cleanup.Err)
	w("")
	w("Summary: %s", f)
	w("")
	w("| measurement | samples | result |")
	w("|---|---|---|")
	w("| echo RTT | %d | median %v |", f.Echo.N, f.Echo.Median.Round(time.Microsecond))
	w("| isolated misses -> Packet-In | %d (+%d lost) | min %v median %v max %v |", len(res.Isolated), res.IsolatedLost,
		Summarise(res.Isolated).Min.Round(time.Microsecond), Summarise(res.Isolated).Median.Round(time.Microsecond), Summarise(res.Isolated).Max.Round(time.Microsecond))
	w("| burst -> Packet-Ins | %d of %d | %s |", len(res.Burst), res.BurstSent, burstLine(f))
	w("| overflow burst | %d sent, %d back | %s |", res.QueueSent, res.QueueGot, queueLine(f))
	w("| hit delay (one-way) | %d | min %v p10 %v median %v p90 %v |", f.Hit.N, f.Hit.Min.Round(time.Microsecond), f.Hit.P10.Round(time.Microsecond), f.Hit.Median.Round(time.Microsecond), f.Hit.P90.Round(time.Microsecond))
	w("| PACKET_OUT -> IF_OUT | %d | min %v median %v p90 %v |", f.PacketOut.N, f.PacketOut.Min.Round(time.Microsecond), f.PacketOut.Median.Round(time.Microsecond), f.PacketOut.P90.Round(time.Microsecond))
	w("| insert batches | %d | %s |", len(res.Batches), insertLine(f))
	w("| delete batches | %d | %s |", len(res.Deletes), deleteLine(f))
	w("| cache probe | %d rules | %s |", len(res.Cache), cacheLine(f))
	w("")
	for _, p := range plots {
		w("![%s](%s)", p, p)
		w("")
	}
	w("## Profile")
	w("")
	w("```yaml")
	b.Write(profileYAML)
	w("```")
	if err := os.WriteFile(filepath.Join(dir, "report.md"), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	// The raw samples, so any fit can be redone (durations in ns).
	raw, err := json.MarshalIndent(res, "", " ")
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "samples.json"), raw, 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

func burstLine(f Fits) string {
	if f.Burst == nil {
		return f.BurstErr
	}
	return fmt.Sprintf("%.0f Packet-Ins/s (p = %v ± %v), batches of %d", f.Burst.Rate, f.Burst.PacketInCost.Round(time.Microsecond), f.Burst.SEPacketInCost.Round(time.Microsecond), f.Burst.BatchSize)
}

func queueLine(f Fits) string {
	if f.Queue == nil {
		return "-"
	}
	if f.Queue.LowerBound {
		return fmt.Sprintf("nothing dropped: queue >= %d", f.Queue.Limit)
	}
	return fmt.Sprintf("%d dropped: miss queue ≈ %d", f.Queue.Dropped, f.Queue.Limit)
}

func insertLine(f Fits) string {
	if f.Insert == nil {
		return f.InsertErr
	}
	in := f.Insert
	return fmt.Sprintf("%s; c_write %v ± %v, c_move %v ± %v, slow window %d at %v ± %v; overhead %v; sigma %v",
		in.Layout, in.CWrite.Round(100*time.Nanosecond), in.SECWrite.Round(100*time.Nanosecond),
		in.CMove.Round(10*time.Nanosecond), in.SECMove.Round(10*time.Nanosecond), in.SlowWindow,
		in.CSlow.Round(100*time.Nanosecond), in.SECSlow.Round(100*time.Nanosecond), in.Overhead.Round(time.Microsecond), in.Sigma.Round(time.Microsecond))
}

func deleteLine(f Fits) string {
	if f.Delete == nil {
		return f.DeleteErr
	}
	return fmt.Sprintf("%v ± %v per rule", f.Delete.CInvalidate.Round(100*time.Nanosecond), f.Delete.SE.Round(100*time.Nanosecond))
}

func cacheLine(f Fits) string {
	if f.Cache == nil {
		return "-"
	}
	if !f.Cache.IsCache {
		return fmt.Sprintf("all %d at hit speed (median %v): no cache seen", f.Cache.Fast, f.Cache.FastDelay.Median.Round(time.Microsecond))
	}
	return fmt.Sprintf("%d fast (median %v), %d slow (median %v): capacity %d", f.Cache.Fast, f.Cache.FastDelay.Median.Round(time.Microsecond),
		f.Cache.Slow, f.Cache.SlowDelay.Median.Round(time.Microsecond), f.Capacity)
}

// insertPlot: per-insert cost of each batch ((duration − overhead)/m)
// against the occupancy after it, measured (points) and fitted (lines).
func insertPlot(res *Result, fit InsertFit) *plot.Plot {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Insert cost per rule vs occupancy (layout %s)", fit.Layout)
	p.X.Label.Text = "rules in the table"
	p.Y.Label.Text = "ms per insert"
	p.Legend.Top, p.Legend.Left = true, true
	by := map[string][]Batch{}
	for _, b := range res.Batches {
		if len(b.Inserts) > 0 {
			by[b.Pattern] = append(by[b.Pattern], b)
		}
	}
	pats := make([]string, 0, len(by))
	for k := range by {
		pats = append(pats, k)
	}
	sort.Strings(pats)
	for _, pat := range pats {
		var meas, pred plotter.XYs
		for _, b := range by[pat] {
			m := float64(len(b.Inserts))
			x := float64(b.Inserts[len(b.Inserts)-1].Occ + 1)
			meas = append(meas, plotter.XY{X: x, Y: (float64(b.Duration-fit.Overhead) / m) / 1e6})
			pred = append(pred, plotter.XY{X: x, Y: (float64(fit.Predict(b)-fit.Overhead) / m) / 1e6})
		}
		sort.Slice(pred, func(i, j int) bool { return pred[i].X < pred[j].X })
		c := patternColor[pat]
		if sc, err := plotter.NewScatter(meas); err == nil {
			sc.Color = c
			sc.Radius = vg.Points(1.5)
			p.Add(sc)
			p.Legend.Add(pat+" measured", sc)
		}
		if l, err := plotter.NewLine(pred); err == nil {
			l.Color = c
			l.Width = vg.Points(1.2)
			p.Add(l)
			p.Legend.Add(pat+" fitted", l)
		}
	}
	return p
}

func burstPlot(res *Result, f BurstFit) *plot.Plot {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Packet-In arrivals of a %d-miss burst (batches of %d, %.0f/s)", res.BurstSent, f.BatchSize, f.Rate)
	p.X.Label.Text = "Packet-In index"
	p.Y.Label.Text = "arrival after the first miss (ms)"
	p.Legend.Top, p.Legend.Left = true, true
	var meas, pred plotter.XYs
	for i, d := range res.Burst {
		meas = append(meas, plotter.XY{X: float64(i), Y: float64(d) / 1e6})
	}
	if len(res.Burst) > 0 {
		// Fitted: from the first group's release, each later group one
		// build of its size (g·p) after the previous one.
		y := float64(res.Burst[0])
		before := 0
		for i, g := range f.Groups {
			if i > 0 {
				y += float64(time.Duration(g) * f.PacketInCost)
			}
			pred = append(pred, plotter.XY{X: float64(before), Y: y / 1e6}, plotter.XY{X: float64(before + g - 1), Y: y / 1e6})
			before += g
		}
	}
	if sc, err := plotter.NewScatter(meas); err == nil {
		sc.Radius = vg.Points(1.5)
		p.Add(sc)
		p.Legend.Add("measured", sc)
	}
	if l, err := plotter.NewLine(pred); err == nil {
		l.Color = color.RGBA{R: 200, A: 255}
		p.Add(l)
		p.Legend.Add("fitted (each group released its size × p after the last)", l)
	}
	return p
}

func cachePlot(res *Result, f Fits) *plot.Plot {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("First-probe delay per rule after %d rules (newest first)", res.CacheRules)
	p.X.Label.Text = "rule (newest first)"
	p.Y.Label.Text = "delay (ms)"
	var meas plotter.XYs
	for i, d := range res.Cache {
		meas = append(meas, plotter.XY{X: float64(i), Y: float64(d) / 1e6})
	}
	if sc, err := plotter.NewScatter(meas); err == nil {
		sc.Radius = vg.Points(1.5)
		p.Add(sc)
	}
	if f.Cache != nil && f.Cache.IsCache {
		th := float64(f.Cache.Threshold) / 1e6
		if l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: th}, {X: float64(len(res.Cache)), Y: th}}); err == nil {
			l.Color = color.RGBA{R: 200, A: 255}
			p.Add(l)
			p.Legend.Add(fmt.Sprintf("fast/slow split: %d fast", f.Cache.Fast), l)
		}
	}
	return p
}

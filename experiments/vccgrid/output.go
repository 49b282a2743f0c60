package vccgrid

import (
	"fmt"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/pseudocong/pseudocong/experiments/grid"
)

// WriteDir writes summary.json, cells.csv (every seed's run) and one
// figure of per-class throughput per experiment (vcc-a.png … vcc-d.png)
// into dir.
func (r *Result) WriteDir(dir string) error {
	o := &grid.Output{What: "vcc grid", Summary: r.Summary(), CSV: r.csv(), Figures: func(dir string) error {
		for _, e := range []string{"a", "b", "c", "d"} {
			if err := r.figure(e, filepath.Join(dir, "vcc-"+e+".png")); err != nil {
				return err
			}
		}
		return nil
	}}
	return o.Write(dir)
}

func (r *Result) csv() [][]string {
	rows := [][]string{{"cell", "vcc", "seed", "ecn_mbps_per_flow", "nonecn_mbps_per_flow", "ratio", "jain", "nonecn_retransmits", "rewritten_frames_all_seeds", "bad_checksums_all_seeds"}}
	ff := func(x float64) string { return strconv.FormatFloat(x, 'f', 6, 64) }
	for _, c := range r.Cells {
		for _, x := range []struct {
			name string
			sd   *Side
		}{{"without", &c.Without}, {"with", &c.With}} {
			for k := range x.sd.ECN {
				ratio := 0.0
				if x.sd.ECN[k] > 0 {
					ratio = x.sd.NonECN[k] / x.sd.ECN[k]
				}
				rows = append(rows, []string{c.Key(), x.name, strconv.FormatUint(r.Spec.Seed+uint64(k), 10),
					ff(x.sd.ECN[k]), ff(x.sd.NonECN[k]), ff(ratio), ff(x.sd.Jain[k]),
					strconv.FormatUint(x.sd.Retrans[k], 10), strconv.FormatUint(x.sd.Rewritten, 10), strconv.FormatUint(x.sd.Bad, 10)})
			}
		}
	}
	return rows
}

// figure is the paper's kind of bar chart: per-flow throughput of the
// ECN and the non-ECN (vECN) class per cell, without and with vCC.
func (r *Result) figure(exp, path string) error {
	var cells []*CellResult
	var names []string
	for _, c := range r.Cells {
		if c.Exp == exp {
			cells = append(cells, c)
			names = append(names, c.Name)
		}
	}
	if len(cells) == 0 {
		return nil
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("vcc (%s): per-flow throughput by class", exp)
	p.Y.Label.Text = "Mbit/s per flow"
	p.Legend.Top = true
	series := []struct {
		label string
		val   func(*CellResult) float64
	}{
		{"ECN, without vCC", func(c *CellResult) float64 { return grid.Mean(c.Without.ECN) }},
		{"non-ECN, without vCC", func(c *CellResult) float64 { return grid.Mean(c.Without.NonECN) }},
		{"ECN, with vCC", func(c *CellResult) float64 { return grid.Mean(c.With.ECN) }},
		{"vECN, with vCC", func(c *CellResult) float64 { return grid.Mean(c.With.NonECN) }},
	}
	w := vg.Points(7)
	top := 0.0
	for i, s := range series {
		v := make(plotter.Values, len(cells))
		for k, c := range cells {
			v[k] = s.val(c)
			top = max(top, v[k])
		}
		bars, err := plotter.NewBarChart(v, w)
		if err != nil {
			return fmt.Errorf("vcc grid: plot: %w", err)
		}
		bars.Color = plotutil.Color(i)
		bars.LineStyle.Width = 0
		bars.Offset = vg.Length(i-len(series)/2) * w
		p.Add(bars)
		p.Legend.Add(s.label, bars)
	}
	p.NominalX(names...)
	p.Y.Min, p.Y.Max = 0, 1.35*top // room for the legend above the bars
	width := vg.Length(max(7, len(cells))) * vg.Inch
	if err := p.Save(width, 4.2*vg.Inch, path); err != nil {
		return fmt.Errorf("vcc grid: %s: %w", path, err)
	}
	return nil
}

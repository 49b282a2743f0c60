package mptcpgrid

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

// WriteDir writes summary.json, cells.csv (every seed's run) and the
// figures (goodput-d{D1}-{D2}-b{KB}.png and blocked-….png) into dir.
func (r *Result) WriteDir(dir string) error {
	o := &grid.Output{What: "mptcp grid", Summary: r.Summary(), CSV: r.csv(), Figures: r.writeFigures}
	return o.Write(dir)
}

func (r *Result) csv() [][]string {
	rows := [][]string{{"policy", "d1_ms", "d2_ms", "loss2_percent", "buffer_kb", "seed", "goodput_mbps", "blocked_share"}}
	for _, c := range r.Cells {
		for k := range c.Goodput {
			rows = append(rows, []string{c.Policy, strconv.Itoa(c.D1), strconv.Itoa(c.D2), strconv.Itoa(c.Loss2), strconv.Itoa(c.BufferKB),
				strconv.FormatUint(r.Spec.Seed+uint64(k), 10),
				strconv.FormatFloat(c.Goodput[k], 'f', 6, 64), strconv.FormatFloat(c.Blocked[k], 'f', 6, 64)})
		}
	}
	return rows
}

func (r *Result) writeFigures(dir string) error {
	s := r.Spec
	for _, d := range s.Delays {
		for _, b := range s.BuffersKB {
			for _, fig := range []struct {
				name, ylabel string
				val          func(*CellResult) float64
			}{
				{"goodput", "goodput (Mbit/s)", (*CellResult).MeanGoodput},
				{"blocked", "share of time blocked by the receive window", (*CellResult).MeanBlocked},
			} {
				p := plot.New()
				p.Title.Text = fmt.Sprintf("delays %d/%d ms, receive buffer %d KB", d[0], d[1], b)
				p.X.Label.Text = "subflow 2 loss rate (%)"
				p.Y.Label.Text = fig.ylabel
				p.Legend.Top = true
				for i, pol := range s.Policies {
					var xys plotter.XYs
					for _, c := range r.Cells {
						if c.Policy == pol && c.D1 == d[0] && c.D2 == d[1] && c.BufferKB == b {
							xys = append(xys, plotter.XY{X: float64(c.Loss2), Y: fig.val(c)})
						}
					}
					l, pts, err := plotter.NewLinePoints(xys)
					if err != nil {
						return fmt.Errorf("mptcp grid: plot: %w", err)
					}
					l.Color, pts.Color = plotutil.Color(i), plotutil.Color(i)
					pts.Shape = plotutil.Shape(i)
					p.Add(l, pts)
					p.Legend.Add(pol, l, pts)
				}
				p.Y.Min = 0
				p.Add(plotter.NewGrid())
				name := filepath.Join(dir, fmt.Sprintf("%s-d%d-%d-b%d.png", fig.name, d[0], d[1], b))
				if err := p.Save(7*vg.Inch, 4.2*vg.Inch, name); err != nil {
					return fmt.Errorf("mptcp grid: %s: %w", name, err)
				}
			}
		}
	}
	return nil
}

package experiments

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/pseudocong/pseudocong/probes"
)

// Figures are drawn like the paper's: delay (or RTT) against the flow's
// index with one line per series (Fig. 4–15), and RTT histograms with the
// timer profile's bin edges marked (Fig. 16–19).

const (
	figWidth  = 7 * vg.Inch
	figHeight = 4.2 * vg.Inch
)

// series is one line of a figure.
type series struct {
	label string
	cell  Cell
}

// drawFigures draws every figure of the result, in a fixed order, and
// hands each to save with its file name; it stops at the first error of
// save. The caller decides where the PNG goes (WriteOutputs: a staging
// directory, so that a failed write leaves no partial run).
func drawFigures(r *Result, save func(p *plot.Plot, name string) error) error {
	for _, e := range r.Spec.Runs {
		cells := cellsOf(r, e.ID)
		switch e.Kind {
		case KindPacketIn:
			groups := groupCells(cells, func(c Cell) string {
				if len(e.Priorities) > 1 && len(e.BaseLoads) > 1 {
					return c.Priority
				}
				return ""
			})
			for _, g := range groups {
				name := e.ID + ".png"
				title := fmt.Sprintf("%s: %s", e.Paper, e.Title)
				if g.key != "" {
					name = fmt.Sprintf("%s_%s.png", e.ID, g.key)
					title += " (" + g.key + " priority)"
				}
				p := indexPlot(title, "new flow index", "delay (s)", seriesOf(e, g.cells, g.key != ""))
				if err := save(p, name); err != nil {
					return err
				}
			}
		case KindHandshake, KindData:
			kindLabel := "SYN"
			pk := probes.KindSYN
			if e.Kind == KindData {
				kindLabel, pk = "data packet", probes.KindData
			}
			for _, g := range groupCells(cells, func(c Cell) string { return fmt.Sprintf("L%d", c.BaseLoad) }) {
				p := indexPlot(fmt.Sprintf("%s: RTT, TCAM load %s", e.Paper, strings.TrimPrefix(g.key, "L")),
					kindLabel+" index", "RTT (s)", seriesOf(e, g.cells, false))
				if err := save(p, fmt.Sprintf("%s_%s_rtt.png", e.ID, g.key)); err != nil {
					return err
				}
				h := histPlot(fmt.Sprintf("%s: RTT distribution, TCAM load %s", e.Paper, strings.TrimPrefix(g.key, "L")),
					seriesOf(e, g.cells, false), probes.Bins(r.Timers, pk))
				if err := save(h, fmt.Sprintf("%s_%s_hist.png", e.ID, g.key)); err != nil {
					return err
				}
			}
			if len(e.BaseLoads) > 1 {
				for _, g := range groupCells(cells, func(c Cell) string { return rateString(c.Rate) + "pps" }) {
					p := indexPlot(fmt.Sprintf("%s: RTT at %s", e.Paper, g.key), kindLabel+" index", "RTT (s)",
						seriesOf(e, g.cells, false))
					if err := save(p, fmt.Sprintf("%s_%s_rtt.png", e.ID, g.key)); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// renderPNG renders a figure at the report's size (96 dpi, as gonum's
// "png" format) and encodes it with the fastest deflate level: the default
// level spent a tenth of the paper spec's time compressing figures of a
// few flat colours, for files about 10 % smaller.
func renderPNG(p *plot.Plot) (io.WriterTo, error) {
	c := vgimg.New(figWidth, figHeight)
	p.Draw(draw.New(c))
	return fastPNG{c.Image()}, nil
}

// fastPNG writes an image as PNG with png.BestSpeed.
type fastPNG struct{ img image.Image }

func (f fastPNG) WriteTo(w io.Writer) (int64, error) {
	cw := &countingWriter{w: w}
	err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(cw, f.img)
	return cw.n, err
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

func cellsOf(r *Result, expID string) []Cell {
	var out []Cell
	for _, c := range r.Cells {
		if c.Exp.ID == expID {
			out = append(out, c)
		}
	}
	return out
}

type cellGroup struct {
	key   string
	cells []Cell
}

// groupCells splits cells by key, keeping first-seen order.
func groupCells(cells []Cell, key func(Cell) string) []cellGroup {
	var out []cellGroup
	idx := map[string]int{}
	for _, c := range cells {
		k := key(c)
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, cellGroup{key: k})
		}
		out[i].cells = append(out[i].cells, c)
	}
	return out
}

// seriesOf labels each cell by the dimensions that vary among cells.
func seriesOf(e ExperimentSpec, cells []Cell, skipPriority bool) []series {
	vary := func(f func(Cell) string) bool {
		for _, c := range cells {
			if f(c) != f(cells[0]) {
				return true
			}
		}
		return false
	}
	load := func(c Cell) string { return fmt.Sprintf("load %d", c.BaseLoad) }
	rate := func(c Cell) string { return rateString(c.Rate) + " pps" }
	prio := func(c Cell) string { return c.Priority }
	switches := func(c Cell) string {
		if c.Switches == 1 {
			return "1 switch"
		}
		return fmt.Sprintf("%d switches", c.Switches)
	}
	var out []series
	for _, c := range cells {
		var parts []string
		if vary(switches) {
			parts = append(parts, switches(c))
		}
		if vary(load) {
			parts = append(parts, load(c))
		}
		if vary(rate) {
			parts = append(parts, rate(c))
		}
		if vary(prio) && !skipPriority {
			parts = append(parts, prio(c))
		}
		label := strings.Join(parts, ", ")
		if label == "" {
			label = fmt.Sprintf("%s pps, load %d, %s", rateString(c.Rate), c.BaseLoad, c.Priority)
		}
		out = append(out, series{label, c})
	}
	return out
}

// indexPlot draws delay against flow index, one line per series; flows
// that never arrived are left out.
func indexPlot(title, xLabel, yLabel string, ss []series) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Legend.Top = true
	p.Legend.Left = true
	for i, s := range ss {
		o := s.cell.Outcome
		var xys plotter.XYs
		for j, d := range o.Delays {
			if o.Delivered[j] {
				xys = append(xys, plotter.XY{X: float64(j), Y: d.Seconds()})
			}
		}
		if len(xys) == 0 {
			continue
		}
		// The rasterizer's cost grows faster than linearly with a path's
		// length, so a long series is drawn as short overlapping pieces
		// (same picture, seconds less per figure).
		for start := 0; start < len(xys); start += chunk {
			end := min(start+chunk+1, len(xys))
			l, err := plotter.NewLine(xys[start:end])
			if err != nil {
				break
			}
			l.Color = plotutil.Color(i)
			l.Width = vg.Points(1)
			p.Add(l)
			if start == 0 {
				p.Legend.Add(s.label, l)
			}
		}
	}
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	return p
}

// chunk is the number of segments per drawn piece of a long line.
const chunk = 64

// histPlot draws, per series, the number of RTTs in bins of equal width as
// a step line, with a dashed vertical line at every timer edge in range.
func histPlot(title string, ss []series, edges []time.Duration) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "RTT (s)"
	p.Y.Label.Text = "number of flows"
	p.Legend.Top = true
	var top float64
	for _, s := range ss {
		for j, d := range s.cell.Outcome.Delays {
			if s.cell.Outcome.Delivered[j] {
				top = math.Max(top, d.Seconds())
			}
		}
	}
	if top <= 0 {
		top = 1
	}
	width := niceWidth(top / 40)
	nbins := int(math.Ceil(top/width)) + 1
	ymax := 1.0
	for i, s := range ss {
		counts := make([]float64, nbins)
		for j, d := range s.cell.Outcome.Delays {
			if s.cell.Outcome.Delivered[j] {
				counts[min(int(d.Seconds()/width), nbins-1)]++
			}
		}
		var xys plotter.XYs
		for b, n := range counts {
			xys = append(xys, plotter.XY{X: float64(b) * width, Y: n}, plotter.XY{X: float64(b+1) * width, Y: n})
			ymax = math.Max(ymax, n)
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			continue
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1.2)
		p.Add(l)
		p.Legend.Add(s.label, l)
	}
	xmax := float64(nbins) * width
	for _, e := range edges {
		x := e.Seconds()
		if x > xmax {
			break
		}
		l, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: ymax * 1.05}})
		if err != nil {
			continue
		}
		l.Color = color.Gray{Y: 80}
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(l)
		lbl, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: x, Y: ymax * 1.05}},
			Labels: []string{secString(e) + " s"}})
		if err == nil {
			p.Add(lbl)
		}
	}
	p.Add(plotter.NewGrid())
	return p
}

// niceWidth rounds w up to 1, 2 or 5 times a power of ten.
func niceWidth(w float64) float64 {
	if w <= 0 {
		return 0.001
	}
	e := math.Pow(10, math.Floor(math.Log10(w)))
	for _, m := range []float64{1, 2, 5, 10} {
		if w <= m*e {
			return m * e
		}
	}
	return 10 * e
}

package experiments

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"

	"github.com/pseudocong/pseudocong/netsim"
)

// Time series (docs/experiments.md "Time series"): a run whose spec has
// series.interval (or `experiment run --series-interval`) records, per
// cell, every link direction's and queue's backlog, drops, marks and
// throughput per interval and every flow's received packets and bytes per
// interval (netsim.Recorder). They are written as two CSVs per experiment
// and two figures per cell. Recording only reads the model: the summary is
// the same with it as without.

// seriesFiles writes the series of every cell that has them through
// write.
func seriesFiles(r *Result, write func(name string, wt io.WriterTo) error) error {
	for _, e := range r.Spec.Runs {
		cells := cellsOf(r, e.ID)
		has := false
		for _, c := range cells {
			has = has || (c.Outcome != nil && c.Outcome.Series != nil)
		}
		if !has {
			continue
		}
		chain := len(e.Chain) > 0
		var links, flows bytes.Buffer
		if err := writeLinkSeries(&links, cells, chain); err != nil {
			return fmt.Errorf("series %s: %w", e.ID, err)
		}
		if err := write(e.ID+"_series_links.csv", &links); err != nil {
			return err
		}
		if err := writeFlowSeries(&flows, cells, chain); err != nil {
			return fmt.Errorf("series %s: %w", e.ID, err)
		}
		if err := write(e.ID+"_series_flows.csv", &flows); err != nil {
			return err
		}
		for _, c := range cells {
			if c.Outcome.Series == nil {
				continue
			}
			slug := strings.ReplaceAll(c.Label(), " ", "_")
			for _, fig := range []struct {
				suffix, ylabel string
				y              func(netsim.LinkSample) float64
			}{
				{"queue", "queue length (packets)", func(s netsim.LinkSample) float64 { return float64(s.QLen) }},
				{"throughput", "throughput (Mbit/s)", func(s netsim.LinkSample) float64 { return s.ThroughputBps / 1e6 }},
			} {
				p := seriesPlot(fmt.Sprintf("%s: %s per link direction", c.Label(), fig.suffix), fig.ylabel, c.Outcome.Series.Links, fig.y)
				wt, err := renderPNG(p)
				if err != nil {
					return fmt.Errorf("figure %s: %w", slug, err)
				}
				if err := write(fmt.Sprintf("series_%s_%s.png", slug, fig.suffix), wt); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func writeLinkSeries(w io.Writer, cells []Cell, chain bool) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(cellColumns(chain, "t_s", "link", "queue", "qlen_pkts", "qlen_bytes",
		"enqueued", "dropped", "marked", "delivered", "delivered_bytes", "throughput_bps")); err != nil {
		return err
	}
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	for _, c := range cells {
		if c.Outcome.Series == nil {
			continue
		}
		for _, s := range c.Outcome.Series.Links {
			q := "all"
			if s.Queue >= 0 {
				q = strconv.Itoa(s.Queue)
			}
			if err := cw.Write(cellRow(c, chain, seconds(s.T), s.Link, q, strconv.Itoa(s.QLen), strconv.Itoa(s.QBytes),
				u(s.Enqueued), u(s.Dropped), u(s.Marked), u(s.Delivered), u(s.DeliveredBytes),
				strconv.FormatFloat(s.ThroughputBps, 'f', 0, 64))); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

func writeFlowSeries(w io.Writer, cells []Cell, chain bool) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(cellColumns(chain, "t_s", "flow", "packets", "bytes", "throughput_bps")); err != nil {
		return err
	}
	for _, c := range cells {
		if c.Outcome.Series == nil {
			continue
		}
		for _, s := range c.Outcome.Series.Flows {
			if err := cw.Write(cellRow(c, chain, seconds(s.T), s.Flow.String(), strconv.FormatUint(s.Packets, 10),
				strconv.FormatUint(s.Bytes, 10), strconv.FormatFloat(s.ThroughputBps, 'f', 0, 64))); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// seriesPlot draws y against time, one line per link direction that
// carried anything (whole qdisc only, not its child queues).
func seriesPlot(title, ylabel string, samples []netsim.LinkSample, y func(netsim.LinkSample) float64) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "time (s)"
	p.Y.Label.Text = ylabel
	p.Legend.Top = true
	var order []string
	lines := map[string]plotter.XYs{}
	active := map[string]bool{}
	for _, s := range samples {
		if s.Queue >= 0 {
			continue
		}
		if _, ok := lines[s.Link]; !ok {
			order = append(order, s.Link)
		}
		lines[s.Link] = append(lines[s.Link], plotter.XY{X: s.T.Seconds(), Y: y(s)})
		active[s.Link] = active[s.Link] || s.Delivered > 0 || s.Enqueued > 0
	}
	i := 0
	for _, name := range order {
		if !active[name] {
			continue
		}
		xys := lines[name]
		// In short pieces, as indexPlot draws (the rasterizer's cost grows
		// faster than linearly with a path's length).
		for start := 0; start < len(xys); start += chunk {
			l, err := plotter.NewLine(xys[start:min(start+chunk+1, len(xys))])
			if err != nil {
				break
			}
			l.Color = plotutil.Color(i)
			l.Dashes = plotutil.Dashes(i / 7)
			p.Add(l)
			if start == 0 {
				p.Legend.Add(name, l)
			}
		}
		i++
	}
	p.Y.Min = 0
	if p.Y.Max <= 0 {
		p.Y.Max = 1 // all zero: an axis from 0 up
	}
	p.Add(plotter.NewGrid())
	return p
}

package tcp

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Sample is one point of a flow's time series.
type Sample struct {
	T              time.Duration // since the tracer started
	Cwnd, Ssthresh uint32        // segments
	SRTT, RTO      time.Duration
	BytesInFlight  uint64
	DeliveredBytes uint64 // cumulatively acknowledged
	Retrans        uint64 // RetransSegs so far
	Phase          string
}

// Trace is one flow's time series.
type Trace struct {
	Name    string
	Samples []Sample
}

// Tracer samples a connection every Interval on its clock until Stop.
type Tracer struct {
	Trace
	c      *Conn
	every  time.Duration
	start  time.Time
	stop   bool
	sample func()
}

// NewTracer starts sampling c every interval (> 0).
func NewTracer(name string, c *Conn, every time.Duration) *Tracer {
	t := &Tracer{Trace: Trace{Name: name}, c: c, every: every, start: c.clk.Now()}
	t.sample = t.onTick
	c.clk.AfterFunc(0, t.sample)
	return t
}

// Stop ends sampling after the next tick.
func (t *Tracer) Stop() { t.stop = true }

func (t *Tracer) onTick() {
	if t.stop {
		return
	}
	c := t.c
	in := c.Info()
	ss := in.Ssthresh
	t.Samples = append(t.Samples, Sample{
		T: c.clk.Now().Sub(t.start), Cwnd: in.Cwnd, Ssthresh: ss, SRTT: in.SRTT, RTO: in.RTO,
		BytesInFlight: in.BytesInFlight, DeliveredBytes: c.acked, Retrans: c.stats.RetransSegs, Phase: in.Phase.String(),
	})
	c.clk.AfterFunc(t.every, t.sample)
}

// WriteCSV writes the traces as one table: flow, time, and the series.
// An infinite ssthresh is written empty.
func WriteCSV(w io.Writer, traces []*Trace) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"flow", "t_s", "cwnd", "ssthresh", "srtt_ms", "rto_ms", "bytes_in_flight", "delivered_bytes", "retrans", "phase"}); err != nil {
		return err
	}
	for _, tr := range traces {
		for _, s := range tr.Samples {
			ss := ""
			if s.Ssthresh < 0x7fffffff {
				ss = strconv.FormatUint(uint64(s.Ssthresh), 10)
			}
			rec := []string{tr.Name, fmt.Sprintf("%.6f", s.T.Seconds()), strconv.FormatUint(uint64(s.Cwnd), 10), ss,
				fmt.Sprintf("%.3f", float64(s.SRTT)/1e6), fmt.Sprintf("%.3f", float64(s.RTO)/1e6),
				strconv.FormatUint(s.BytesInFlight, 10), strconv.FormatUint(s.DeliveredBytes, 10),
				strconv.FormatUint(s.Retrans, 10), s.Phase}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// PlotSeries draws one series of every trace against time, one line per
// flow. field picks the value (e.g. func(s Sample) float64 { return float64(s.Cwnd) }).
func PlotSeries(title, yLabel string, traces []*Trace, field func(Sample) float64) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "time (s)"
	p.Y.Label.Text = yLabel
	p.Legend.Top = true
	for i, tr := range traces {
		xys := make(plotter.XYs, len(tr.Samples))
		for j, s := range tr.Samples {
			xys[j] = plotter.XY{X: s.T.Seconds(), Y: field(s)}
		}
		if len(xys) == 0 {
			continue
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("tcp: plot %s: %w", tr.Name, err)
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1)
		p.Add(l)
		p.Legend.Add(tr.Name, l)
	}
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	return p, nil
}

// WritePNG renders a plot as PNG.
func WritePNG(w io.Writer, p *plot.Plot) error {
	wt, err := p.WriterTo(7*vg.Inch, 4.2*vg.Inch, "png")
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}

// TimeAtCwnd is how long, by the samples, the window was at most w
// segments (paper 000's "time spent at cwnd = 1" with w = 1), and the
// share of the traced time that is. Each sample counts until the next.
func (tr *Trace) TimeAtCwnd(w uint32) (time.Duration, float64) {
	var at, total time.Duration
	for i := 0; i+1 < len(tr.Samples); i++ {
		d := tr.Samples[i+1].T - tr.Samples[i].T
		total += d
		if tr.Samples[i].Cwnd <= w && tr.Samples[i].Cwnd > 0 {
			at += d
		}
	}
	if total == 0 {
		return 0, 0
	}
	return at, float64(at) / float64(total)
}

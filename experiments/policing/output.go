package policing

import (
	"encoding/json"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Write puts summary.json, series.csv and the throughput plots
// (throughput-<backend>-<group>-<dir>.png: police vs shape vs shape_loss
// over time, the paper's sawtooth vs smooth) in dir.
func (r *Result) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r.Summary, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "summary-"+r.Backend+".json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("cell,t_s,mbps\n")
	keys := make([]string, 0, len(r.Series))
	for k := range r.Series {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for i, v := range r.Series[k] {
			fmt.Fprintf(&b, "%s,%.3f,%.4f\n", k, float64(i+1)*r.Bin.Seconds(), v)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "series-"+r.Backend+".csv"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	for _, g := range []string{"cubic", "bbr"} {
		for _, d := range []string{"up", "down"} {
			if err := r.plot(dir, g, d); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *Result) plot(dir, group, d string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s %s, %s: goodput per %v", r.Backend, group, d, r.Bin)
	p.X.Label.Text = "time (s)"
	p.Y.Label.Text = "Mbit/s"
	colours := []color.Color{color.RGBA{200, 30, 30, 255}, color.RGBA{30, 30, 200, 255}, color.RGBA{30, 150, 30, 255}, color.Gray{100}}
	n := 0
	for i, m := range []string{"police", "shape", "shape_loss", "nolimit"} {
		s, ok := r.Series[fmt.Sprintf("policing.%s.%s.%s.%s", r.Backend, group, m, d)]
		if !ok || len(s) == 0 || m == "nolimit" && d == "down" {
			continue
		}
		xy := make(plotter.XYs, len(s))
		for j, v := range s {
			xy[j].X, xy[j].Y = float64(j+1)*r.Bin.Seconds(), v
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return err
		}
		l.Color = colours[i]
		p.Add(l)
		p.Legend.Add(m, l)
		n++
	}
	if n == 0 {
		return nil
	}
	p.Legend.Top = true
	return p.Save(8*vg.Inch, 3.5*vg.Inch, filepath.Join(dir, fmt.Sprintf("throughput-%s-%s-%s.png", r.Backend, group, d)))
}

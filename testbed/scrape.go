package testbed

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metrics is one scrape of a process's /metrics, by family name.
type Metrics map[string]*dto.MetricFamily

// Scrape fetches and parses http://addr/metrics (text format).
func Scrape(ctx context.Context, addr string) (Metrics, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape %s: %s", addr, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("scrape %s: parse: %w", addr, err)
	}
	return Metrics(fams), nil
}

// Value sums the series of family name whose labels include every pair in
// match: the value of counters, gauges and untyped series, the sample count
// of histograms and summaries. ok is false when no series matches.
func (m Metrics) Value(name string, match map[string]string) (v float64, ok bool) {
	fam, found := m[name]
	if !found {
		return 0, false
	}
	for _, s := range fam.GetMetric() {
		if !labelsInclude(s, match) {
			continue
		}
		ok = true
		switch {
		case s.Counter != nil:
			v += s.Counter.GetValue()
		case s.Gauge != nil:
			v += s.Gauge.GetValue()
		case s.Untyped != nil:
			v += s.Untyped.GetValue()
		case s.Histogram != nil:
			v += float64(s.Histogram.GetSampleCount())
		case s.Summary != nil:
			v += float64(s.Summary.GetSampleCount())
		}
	}
	return v, ok
}

func labelsInclude(s *dto.Metric, match map[string]string) bool {
	for k, want := range match {
		found := false
		for _, lp := range s.GetLabel() {
			if lp.GetName() == k && lp.GetValue() == want {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// WaitMetric scrapes addr every 100 ms until the value of name (see
// Metrics.Value) satisfies ok, or ctx ends. Use it to wait for
// pseudocong_controller_connected_switches >= 1 before sending traffic.
func WaitMetric(ctx context.Context, addr, name string, match map[string]string, ok func(float64) bool) (float64, error) {
	var last error
	for {
		m, err := Scrape(ctx, addr)
		if err == nil {
			if v, found := m.Value(name, match); found && ok(v) {
				return v, nil
			} else if found {
				last = fmt.Errorf("%s = %v", name, v)
			} else {
				last = fmt.Errorf("%s not exposed", name)
			}
		} else {
			last = err
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("wait for %s on %s: %w (last: %v)", name, addr, ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

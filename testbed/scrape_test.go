package testbed

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

func TestScrapeValue(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "x_total", Help: "x"}, []string{"dir"})
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "connected", Help: "g"})
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "lat_seconds", Help: "h"})
	reg.MustRegister(c, g, h)
	c.WithLabelValues("in").Add(3)
	c.WithLabelValues("out").Add(4)
	g.Set(1)
	h.Observe(0.1)
	h.Observe(0.2)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")

	m, err := Scrape(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		match map[string]string
		want  float64
		ok    bool
	}{
		{"x_total", nil, 7, true},
		{"x_total", map[string]string{"dir": "in"}, 3, true},
		{"x_total", map[string]string{"dir": "sideways"}, 0, false},
		{"connected", nil, 1, true},
		{"lat_seconds", nil, 2, true},
		{"absent", nil, 0, false},
	}
	for _, tt := range tests {
		v, ok := m.Value(tt.name, tt.match)
		if v != tt.want || ok != tt.ok {
			t.Errorf("Value(%s, %v) = %v, %v; want %v, %v", tt.name, tt.match, v, ok, tt.want, tt.ok)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := WaitMetric(ctx, addr, "connected", nil, func(v float64) bool { return v >= 2 }); err == nil {
		t.Error("WaitMetric accepted connected=1 for >= 2")
	}
	go func() { time.Sleep(50 * time.Millisecond); g.Set(2) }()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	if v, err := WaitMetric(ctx2, addr, "connected", nil, func(v float64) bool { return v >= 2 }); err != nil || v != 2 {
		t.Errorf("WaitMetric: %v %v", v, err)
	}
}

func TestDaemonStartStop(t *testing.T) {
	d, err := StartDaemon(DaemonConfig{Binary: "/bin/sh", Args: []string{"-c", "echo started; sleep 30"}})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(d.Output(), "started") {
		if time.Now().After(deadline) {
			t.Fatalf("no output: %q", d.Output())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := d.Stop(2 * time.Second); err != nil {
		t.Errorf("stop: %v", err)
	}
	select {
	case <-d.Done():
	default:
		t.Error("not done after Stop")
	}

	// A process that exits with an error reports it.
	d, err = StartDaemon(DaemonConfig{Binary: "/bin/sh", Args: []string{"-c", "exit 3"}})
	if err != nil {
		t.Fatal(err)
	}
	<-d.Done()
	if d.Err() == nil {
		t.Error("exit 3 reported as success")
	}
}

package afport

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// Without ports the collector exports nothing but registers cleanly, and
// lints clean (names, help, counter suffixes).
func TestMetricsRegisterAndLint(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := testutil.GatherAndCount(reg); err != nil || n != 0 {
		t.Fatalf("gathered %d (%v), want 0 without ports", n, err)
	}
	problems, err := testutil.CollectAndLint(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	if _, err := NewMetrics(reg); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("second registration: %v, want a duplicate error", err)
	}
}

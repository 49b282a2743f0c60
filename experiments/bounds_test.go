package experiments

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/pseudocong/pseudocong/profile"
)

// Every numeric spec value with an absurd value is a *SpecError naming the
// key and the allowed range.
func TestSpecValuesAreBounded(t *testing.T) {
	valid, err := builtinSpecs.ReadFile("specs/smoke.yaml")
	if err != nil {
		t.Fatal(err)
	}
	edit := func(old, new string) []byte {
		t.Helper()
		if !strings.Contains(string(valid), old) {
			t.Fatalf("fixture: %q not in smoke.yaml", old)
		}
		return []byte(strings.Replace(string(valid), old, new, 1))
	}
	for _, tc := range []struct {
		name string
		doc  []byte
		want string
	}{
		{"huge flows", edit("flows: 50", "flows: 1e15"), "flows 1000000000000000: must be in [1, 100000]"},
		{"huge rate", edit("rates: [1000]", "rates: [1e15]"), "rate 1e+15 pps: must be in [0.1, 1000000]"},
		{"tiny rate", edit("rates: [1000]", "rates: [1e-300]"), "rate 1e-300 pps: must be in [0.1"},
		{"NaN rate", edit("rates: [1000]", "rates: [.nan]"), "rate NaN pps"},
		{"huge base load", edit("base_loads: [0]", "base_loads: [9223372036854775807]"), "base load 9223372036854775807: must be in [0, 1048576]"},
		{"huge service time", edit("service_time: 1.95ms", "service_time: 2000000h"), "controller.service_time 2000000h0m0s: must be in [0s, 1s]"},
		{"huge link latency", edit("link_latency: 1us", "link_latency: 2000000h"), "network.link_latency 2000000h0m0s: must be in [0s, 10s]"},
		{"negative link latency", edit("link_latency: 1us", "link_latency: -1us"), "network.link_latency -1µs"},
		{"long id", edit("id: table1", "id: "+strings.Repeat("x", 65)), "must be 1 to 64 characters"},
		{"too many runs", edit("rates: [1000]", "rates: ["+rateList(10_001)+"]"), "10003 runs (rates × base_loads × priorities): must be at most 10000"},
		{"too many samples", edit("flows: 50\n    rates: [1000]", "flows: 100000\n    rates: ["+rateList(101)+"]"), "10100040 flows over all runs: must be at most 10000000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSpec(tc.doc, "test")
			var se *SpecError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseSpec = %v, want a *SpecError containing %q", err, tc.want)
			}
		})
	}
	for _, name := range BuiltinSpecNames() {
		if _, err := LoadSpec(name); err != nil {
			t.Errorf("built-in %s: %v", name, err)
		}
	}
}

func rateList(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(i + 1))
	}
	return b.String()
}

// A profile with an absurd value fails the run up front as a *SpecError
// naming the key, quickly and without a large allocation. Before the
// bounds, batch_size 1e9 ran the test binary out of memory, 1e15 panicked
// in makeslice when the agent was built, and tcam.capacity 1e10 failed
// every cell at run time (a run error, exit 1).
func TestAbsurdProfileFailsBeforeTheRun(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "profile", "builtin", "pica8-p3297.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	spec, err := LoadSpec("smoke")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tc := range []struct{ old, new, want string }{
		{"batch_size: 25", "batch_size: 1000000000", "agent.batch_size 1000000000: must be in [1, 65536]"},
		{"batch_size: 25", "batch_size: 1e15", "agent.batch_size 1000000000000000: must be in [1, 65536]"},
		{"capacity: 4000", "capacity: 1e10", "tcam.capacity 10000000000: must be in [1, 1048576]"},
		{"miss_queue_limit: 1024", "miss_queue_limit: 1e15", "agent.miss_queue_limit 1000000000000000"},
		{"capacity: 65536", "capacity: 1e15", "backing_table.capacity 1000000000000000"},
	} {
		t.Run(tc.new, func(t *testing.T) {
			if !strings.Contains(string(src), tc.old) {
				t.Fatalf("fixture: %q not in pica8-p3297.yaml", tc.old)
			}
			path := filepath.Join(dir, strings.NewReplacer(":", "", " ", "_").Replace(tc.new)+".yaml")
			if err := os.WriteFile(path, []byte(strings.Replace(string(src), tc.old, tc.new, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Execute(context.Background(), spec, Options{Profile: path, Workers: 1})
			runtime.ReadMemStats(&after)
			var se *SpecError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Execute = %v, want a *SpecError containing %q", err, tc.want)
			}
			// Loading and checking a profile allocates kilobytes; the smoke
			// run itself would be tens of MB, a 1e9 batch buffer 100 GB.
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
				t.Errorf("allocated %d bytes before failing", grew)
			}
		})
	}
}

// The largest TCAM the bounds admit really runs (so the bound is not a
// crash moved elsewhere) within a bounded heap.
func TestLargestTCAMRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates a TCAM of profile.MaxTCAMCapacity slots")
	}
	src, err := os.ReadFile(filepath.Join("..", "profile", "builtin", "pica8-p3297.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "big.yaml")
	big := strings.Replace(string(src), "capacity: 4000", "capacity: 1048576", 1)
	if err := os.WriteFile(path, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := paperSubset(t, map[string]func(*ExperimentSpec){
		"table1": func(e *ExperimentSpec) { e.Rates, e.Flows = []float64{1000}, 20 },
	})
	if _, err := Execute(context.Background(), spec, Options{Profile: path, Workers: 1}); err != nil {
		t.Fatalf("capacity %d: %v", profile.MaxTCAMCapacity, err)
	}
}

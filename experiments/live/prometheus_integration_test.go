//go:build integration

package live_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/experiments/live"
	"github.com/pseudocong/pseudocong/internal/testenv"
	"github.com/pseudocong/pseudocong/probes"
	"github.com/pseudocong/pseudocong/profile"
	"github.com/pseudocong/pseudocong/testbed"
)

// The repository's scrape config names these targets; the test rewrites
// them to its own free ports, so it never collides with a concurrent run.
var configTargets = map[string]string{"controller": "127.0.0.1:9101", "switch": "127.0.0.1:9102", "probe": "127.0.0.1:9103"}

func getMetrics(addr string) ([]byte, error) {
	c := &http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s/metrics: %s", addr, resp.Status)
	}
	return io.ReadAll(resp.Body)
}

// Debian's Prometheus, started with deploy/prometheus/prometheus.yml (its
// targets pointed at this run's ports), scrapes the controller, the switch
// and the probes of a live-backend run; histogram_quantile over its HTTP
// API gives values for Packet-In handling and TCAM insert latency, and
// `promtool check metrics` passes on every /metrics while the run is on.
func TestPrometheusScrapesLiveBackend(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireCommand(t, "prometheus", "promtool")
	bin := testenv.BuildPseudocong(t)
	raw, err := os.ReadFile(filepath.Join(repoRoot(), "deploy", "prometheus", "prometheus.yml"))
	if err != nil {
		t.Fatal(err)
	}
	addrs := map[string]string{}
	config := string(raw)
	for role, target := range configTargets {
		if !strings.Contains(config, `"`+target+`"`) {
			t.Fatalf("prometheus.yml has no target %s for the %s", target, role)
		}
		addrs[role] = testenv.ReserveAddr(t) // the scrape config names it before anything starts
		config = strings.ReplaceAll(config, `"`+target+`"`, `"`+addrs[role]+`"`)
	}
	prom := testenv.StartPrometheus(t, config)

	prof, err := profile.Load("pica8-p3297")
	if err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, bin)
	cfg := live.Config{
		Binary: bin, Profile: prof, Timers: probes.Berkeley(), Seed: 1,
		ControllerService: 100 * time.Microsecond, LinkLatency: 20 * time.Microsecond,
		// One cell long enough for several 5 s scrapes of the same processes.
		Cells:             []live.Cell{{Label: "prom", Key: "prom", Kind: live.KindHandshake, Flows: 150, Rate: 10, BaseLoad: 500, Priority: "ascending"}},
		ControllerMetrics: addrs["controller"], SwitchMetrics: addrs["switch"], ProbeMetrics: addrs["probe"],
	}

	// Lint every endpoint once the run is in full swing (the endpoints go
	// away with the run).
	var lintMu sync.Mutex
	linted := map[string]string{}
	runDone := make(chan struct{})
	lintDone := make(chan struct{})
	go func() {
		defer close(lintDone)
		for {
			select {
			case <-runDone:
				return
			case <-time.After(500 * time.Millisecond):
			}
			m, err := testbed.Scrape(context.Background(), addrs["switch"])
			if err != nil {
				continue
			}
			if v, _ := m.Value("pseudocong_agent_packet_ins_sent_total", nil); v < 20 {
				continue
			}
			for role, addr := range addrs {
				body, err := getMetrics(addr)
				if err != nil {
					lintMu.Lock()
					linted[role] = "fetch: " + err.Error()
					lintMu.Unlock()
					continue
				}
				lint := exec.Command("promtool", "check", "metrics")
				lint.Stdin = bytes.NewReader(body)
				out, err := lint.CombinedOutput()
				res := "ok"
				if err != nil {
					res = fmt.Sprintf("%v: %s", err, out)
				}
				lintMu.Lock()
				linted[role] = res
				lintMu.Unlock()
			}
			return
		}
	}()
	res, err := live.Run(context.Background(), cfg)
	close(runDone)
	<-lintDone
	if err != nil {
		t.Fatalf("live run: %v", err)
	}
	if left := snapshot(t, bin).newSince(before); !left.empty() {
		t.Errorf("left behind: %+v", left)
	}
	t.Logf("live/sim median RTT %.3f", res.Values[live.KeyAgreement])
	for role := range addrs {
		if r, ok := linted[role]; !ok {
			t.Errorf("%s /metrics never linted", role)
		} else if r != "ok" {
			t.Errorf("promtool check metrics on the %s: %s", role, r)
		}
	}

	finite := func(s []testenv.Sample) bool {
		return len(s) > 0 && !math.IsNaN(s[0].Value) && !math.IsInf(s[0].Value, 0) && s[0].Value > 0
	}
	for what, q := range map[string]string{
		"Packet-In handling":  `histogram_quantile(0.9, sum by (le) (rate(pseudocong_controller_packet_in_handling_seconds_bucket[1m])))`,
		"TCAM insert latency": `histogram_quantile(0.9, sum by (le) (rate(pseudocong_tcam_insert_latency_seconds_bucket[1m])))`,
		"probe SYN RTT":       `histogram_quantile(0.5, sum by (le) (rate(pseudocong_probe_rtt_seconds_bucket[1m])))`,
	} {
		s, err := prom.WaitQuery(q, 20*time.Second, finite)
		if err != nil {
			t.Errorf("%s: %v", what, err)
			continue
		}
		t.Logf("%s: %.6f s", what, s[0].Value)
	}
	for _, job := range []string{"pseudocong-controller", "pseudocong-switch", "pseudocong-probe"} {
		// Scraped successfully at least once during the run.
		if _, err := prom.WaitQuery(`max_over_time(up{job="`+job+`"}[2m]) == 1`, 10*time.Second, nil); err != nil {
			t.Errorf("%s never scraped: %v", job, err)
		}
	}
}

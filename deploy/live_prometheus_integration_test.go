//go:build integration

package deploy

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/testenv"
	"github.com/pseudocong/pseudocong/testbed"
)

// start runs a pseudocong process (testbed.StartDaemon, the helper the
// live backend uses); cleanup stops it and logs its output if the test
// failed.
func start(t *testing.T, bin string, args ...string) *testbed.Daemon {
	t.Helper()
	d, err := testbed.StartDaemon(testbed.DaemonConfig{Binary: bin, Args: args})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Stop(5 * time.Second); err != nil {
			t.Errorf("%v: %v", args[:2], err)
		}
		if t.Failed() {
			out := d.Output()
			if len(out) > 8000 {
				out = out[len(out)-8000:]
			}
			t.Logf("--- %v ---\n%s", args, out)
		}
	})
	return d
}

func requirePortFree(t *testing.T, addr string) {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("%s is taken (the scrape config's port): %v", addr, err)
	}
	l.Close()
}

func fetchMetrics(addr string) ([]byte, error) {
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

func finite(s []testenv.Sample) bool {
	if len(s) == 0 {
		return false
	}
	for _, x := range s {
		if math.IsNaN(x.Value) || math.IsInf(x.Value, 0) {
			return false
		}
	}
	return true
}

// Debian's Prometheus, started with the repository's scrape config,
// scrapes the controller, the switch (AF_PACKET ports on a testbed, the
// pica8-p3297 model) and a probe during a short live run; the histogram
// quantiles the dashboard shows come back non-empty, and every /metrics
// passes promtool's lint.
func TestPrometheusScrapesLiveRun(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireCommand(t, "prometheus", "promtool", "go")
	for _, a := range []string{controllerMetrics, switchMetrics, probeMetrics, responderMetrics} {
		requirePortFree(t, a)
	}
	config, err := os.ReadFile("prometheus/prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	bin := testenv.BuildPseudocong(t)

	var b [3]byte
	_, _ = rand.Read(b[:])
	name := "m" + hex.EncodeToString(b[:])
	stateDir := t.TempDir()
	t.Cleanup(func() {
		if err := testbed.Down(name, testbed.DownOptions{StateDir: stateDir}); err != nil {
			t.Errorf("testbed down: %v", err)
		}
	})
	topo, err := testbed.Up(context.Background(), testbed.Config{Name: name, Hosts: 2, StateDir: stateDir})
	if err != nil {
		t.Fatalf("testbed up: %v", err)
	}

	// The controller binds its OpenFlow port itself and reports it
	// (--ready-fd); the metrics ports are the scrape config's.
	ctrl, err := testbed.StartDaemon(testbed.DaemonConfig{Binary: bin, Ready: true,
		Args: []string{"controller", "--listen", "ptcp:0:127.0.0.1", "--metrics-addr", controllerMetrics}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ctrl.Stop(5 * time.Second); err != nil {
			t.Errorf("controller: %v", err)
		}
		if t.Failed() {
			t.Logf("--- controller ---\n%s", ctrl.Output())
		}
	})
	rctx, rcancel := context.WithTimeout(context.Background(), 30*time.Second) // seconds: a busy machine starts processes slowly
	rep, err := ctrl.WaitReady(rctx)
	rcancel()
	if err != nil {
		t.Fatalf("controller did not come up: %v", err)
	}
	ofAddr := rep.OpenFlow
	swArgs := []string{"switch", "--controller", "tcp:" + ofAddr, "--profile", "pica8-p3297", "--metrics-addr", switchMetrics}
	for _, p := range topo.SwitchPorts() {
		swArgs = append(swArgs, "--port", p)
	}
	start(t, bin, swArgs...)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if _, err := testbed.WaitMetric(ctx, controllerMetrics, "pseudocong_controller_connected_switches", nil,
		func(v float64) bool { return v == 1 }); err != nil {
		t.Fatalf("switch not connected: %v", err)
	}

	prom := testenv.StartPrometheus(t, string(config))
	// Scrape controller and switch once before any traffic, so rate()
	// over the run sees the increase.
	for _, job := range []string{"pseudocong-controller", "pseudocong-switch"} {
		if _, err := prom.WaitQuery(`up{job="`+job+`"} == 1`, 30*time.Second, nil); err != nil {
			t.Fatalf("%s not scraped: %v", job, err)
		}
	}

	h1, h2 := topo.Hosts[0], topo.Hosts[1]
	start(t, bin, "probe", "respond", "--netns", h2.Netns, "--metrics-addr", responderMetrics)
	time.Sleep(300 * time.Millisecond) // responder opens its socket
	probe := start(t, bin, "probe", "syn", "--netns", h1.Netns, "--count", "40", "--rate", "4",
		"--timeout", "30s", "--metrics-addr", probeMetrics, "--linger", "5m")

	queries := map[string]string{
		"Packet-In handling (controller)": `histogram_quantile(0.9, sum by (le) (rate(pseudocong_controller_packet_in_handling_seconds_bucket[2m])))`,
		"TCAM insert latency":             `histogram_quantile(0.9, sum by (le) (rate(pseudocong_tcam_insert_latency_seconds_bucket{cause="flow_mod"}[2m])))`,
		"probe SYN RTT":                   `histogram_quantile(0.5, sum by (le) (rate(pseudocong_probe_rtt_seconds_bucket{kind="syn"}[2m])))`,
	}
	for what, q := range queries {
		s, err := prom.WaitQuery(q, 90*time.Second, finite)
		if err != nil {
			t.Errorf("%s: %v", what, err)
			continue
		}
		t.Logf("%s: p-quantile %.6f s", what, s[0].Value)
	}
	for _, job := range []string{"pseudocong-probe", "pseudocong-responder"} {
		if _, err := prom.WaitQuery(`up{job="`+job+`"} == 1`, 30*time.Second, nil); err != nil {
			t.Errorf("%s not scraped: %v", job, err)
		}
	}
	if _, err := prom.WaitQuery(`pseudocong_probe_responder_replies_total{kind="syn"} > 0`, 30*time.Second, nil); err != nil {
		t.Errorf("responder replies: %v", err)
	}

	select {
	case <-probe.Done():
		t.Errorf("probe exited before lingering ended: %v", probe.Err())
	default:
	}
	for _, addr := range []string{controllerMetrics, switchMetrics, probeMetrics, responderMetrics} {
		body, err := fetchMetrics(addr)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		lint := exec.Command("promtool", "check", "metrics")
		lint.Stdin = bytes.NewReader(body)
		if out, err := lint.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics on %s: %v\n%s", addr, err, strings.TrimSpace(string(out)))
		}
	}
}

//go:build integration

package live_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/testenv"
)

// The must-shows for the live backend, through the real CLI:
// `pseudocong experiment run live-check --backend live` brings the testbed
// up, runs the handshake cells and the kernel connect() runs, writes the
// sim backend's outputs plus the live keys, and leaves nothing behind.
//   - SYN retransmissions > 0 with pica8-p3297 and = 0 with ideal
//   - live median RTT / sim median RTT within 0.8 … 1.25
//   - no namespace, interface or process left afterwards
func TestSerialLiveCheckMustShow(t *testing.T) {
	testenv.RequireRoot(t)
	bin := testenv.BuildPseudocong(t)
	before := snapshot(t, bin)
	out := filepath.Join(t.TempDir(), "out")

	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "experiment", "run", "live-check", "--backend", "live", "--out", out)
	b, err := cmd.CombinedOutput()
	t.Logf("experiment run output:\n%s", b)
	if err != nil {
		t.Fatalf("experiment run live-check --backend live: %v", err)
	}
	if left := snapshot(t, bin).newSince(before); !left.empty() {
		t.Errorf("left behind: %+v", left)
	}

	raw, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Backend string         `json:"backend"`
		Results map[string]any `json:"results"`
	}
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Backend != "live" {
		t.Errorf("summary backend %q, want live", sum.Backend)
	}
	num := func(key string) float64 {
		t.Helper()
		v, ok := sum.Results[key].(float64)
		if !ok {
			t.Fatalf("summary.json results[%q] = %v, want a number", key, sum.Results[key])
		}
		return v
	}
	for _, f := range []string{"handshake.csv", "report.md", "handshake_L1000_rtt.png"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("output %s: %v", f, err)
		}
	}

	pica, ideal := num("kernel.syn_retransmits.pica8-p3297"), num("kernel.syn_retransmits.ideal")
	p50Pica, p50Ideal := num("kernel.handshake_p50_s.pica8-p3297"), num("kernel.handshake_p50_s.ideal")
	ratio := num("agreement.live_over_sim.median_rtt")
	t.Logf("kernel SYN retransmits: pica8-p3297 %v, ideal %v; handshake p50: pica8-p3297 %.3f s, ideal %.4f s; live/sim median RTT %.3f",
		pica, ideal, p50Pica, p50Ideal, ratio)
	if !(pica > 0) {
		t.Errorf("pica8-p3297: %v SYN retransmissions, want > 0", pica)
	}
	if ideal != 0 {
		t.Errorf("ideal: %v SYN retransmissions, want 0", ideal)
	}
	if !(p50Pica > p50Ideal) {
		t.Errorf("handshake p50 pica8-p3297 %v s not above ideal %v s", p50Pica, p50Ideal)
	}
	if ratio < 0.8 || ratio > 1.25 {
		t.Errorf("live/sim median RTT %.3f, want within [0.8, 1.25]", ratio)
	}
	// Every handshake probe of the live cells was answered.
	for _, k := range []string{"handshake.bins.10pps", "handshake.bins.100pps"} {
		bins, ok := sum.Results[k].([]any)
		if !ok || len(bins) == 0 {
			t.Errorf("%s = %v", k, sum.Results[k])
		}
	}
}

// Ctrl-C in the middle of a live run: the CLI tears the testbed and its
// children down before it exits.
func TestLiveRunInterruptCleansUp(t *testing.T) {
	testenv.RequireRoot(t)
	bin := testenv.BuildPseudocong(t)
	before := snapshot(t, bin)
	cmd := exec.Command(bin, "experiment", "run", "live-check", "--backend", "live", "--out", t.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var output syncBuffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	})

	// Wait until the run is in full swing: testbed up, controller and
	// switch started.
	deadline := time.Now().Add(30 * time.Second)
	for {
		now := snapshot(t, bin).newSince(before)
		if len(now.netns) >= 2 && len(now.links) >= 2 && len(now.procs) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("live run never came up: %+v\n%s", now, output.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err == nil {
			t.Errorf("interrupted run exited 0")
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("run did not exit within 30 s of SIGINT\n%s", output.String())
	}
	if left := snapshot(t, bin).newSince(before); !left.empty() {
		t.Errorf("left behind after SIGINT: %+v\n%s", left, output.String())
	}
}

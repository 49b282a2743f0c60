package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"os/exec"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/pseudocong/pseudocong/internal/testenv"
	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/testbed"
)

// Must-show (issue 3), process version: a `pseudocong switch --profile`
// process on the wall clock gets 300 ascending-priority rules at 50 per
// second on its passive OpenFlow listener; its /metrics insert-latency
// histogram grows with occupancy for pica8-p3297 and stays at zero for
// ideal (loaded by file path, as --profile FILE works). The paper's full
// 4 000 rules at 10/s is the manual command in docs/dataplane.md.
func TestSwitchProcessInsertLatencyByProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs two switch processes for 6 s")
	}
	bin := testenv.BuildPseudocong(t)
	for _, tc := range []struct {
		name, profile string
		grows         bool
	}{
		{"pica8-p3297", "pica8-p3297", true},
		{"ideal-by-path", "../../profiles/ideal.yaml", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			const rules, split, rate = 300, 100, 50
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// Port 0 for both listeners: the switch reports what it bound.
			d, err := testbed.StartDaemon(testbed.DaemonConfig{Binary: bin, Ready: true, Args: []string{
				"switch", "--profile", tc.profile, "--ports", "2", "--listen", "ptcp:0:127.0.0.1",
				"--metrics-addr", "127.0.0.1:0", "--log-level", "warn"}})
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := d.Stop(10 * time.Second); err != nil {
					t.Errorf("switch: %v", err)
				}
				if t.Failed() {
					t.Logf("switch output:\n%s", d.Output())
				}
			}()
			// Generous: a busy machine may take seconds to start a process.
			rctx, rcancel := context.WithTimeout(ctx, 30*time.Second)
			rep, err := d.WaitReady(rctx)
			rcancel()
			if err != nil {
				t.Fatalf("switch did not come up: %v", err)
			}
			metricsURL := "http://" + rep.Metrics + "/metrics"
			conn := dialSwitch(t, ctx, rep.Listen[0])
			defer conn.Close()

			send := func(from, to int) {
				tick := time.NewTicker(time.Second / rate)
				defer tick.Stop()
				for i := from; i < to; i++ {
					if err := conn.Send(ascendingRule(i)); err != nil {
						t.Fatal(err)
					}
					<-tick.C
				}
				bctx, bcancel := context.WithTimeout(ctx, 10*time.Second)
				defer bcancel()
				if err := conn.Barrier(bctx); err != nil {
					t.Fatal(err)
				}
			}
			send(0, split)
			a := scrapeInsertLatency(t, metricsURL)
			send(split, rules)
			b := scrapeInsertLatency(t, metricsURL)
			if a.GetSampleCount() != split || b.GetSampleCount() != rules {
				t.Fatalf("inserts observed %d then %d, want %d then %d", a.GetSampleCount(), b.GetSampleCount(), split, rules)
			}
			first := a.GetSampleSum() / split
			later := (b.GetSampleSum() - a.GetSampleSum()) / (rules - split)
			t.Logf("mean insert latency: rules 1-%d %.3f ms, %d-%d %.3f ms", split, first*1e3, split+1, rules, later*1e3)
			if !tc.grows {
				if b.GetSampleSum() != 0 {
					t.Errorf("insert latency sum %g, want 0", b.GetSampleSum())
				}
				return
			}
			if !(later > 2*first) || first <= 0 {
				t.Errorf("insert latency does not grow with occupancy: %g then %g", first, later)
			}
		})
	}
}

// An unknown profile is a usage error (exit status 2).
func TestSwitchUnknownProfileIsUsageError(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := testenv.BuildPseudocong(t)
	out, err := exec.Command(bin, "switch", "--profile", "pica9", "--listen", "ptcp:0:127.0.0.1").CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitUsage || !bytes.Contains(out, []byte("pica8-p3297")) {
		t.Errorf("exit %v, output %q; want status %d naming the built-in profiles", err, out, exitUsage)
	}
}

// dialSwitch connects to the switch's passive listener once it is up.
func dialSwitch(t *testing.T, ctx context.Context, addr string) *openflow.Conn {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		nc, err := net.Dial("tcp", addr)
		if err == nil {
			conn := openflow.NewConn(nc, openflow.ConnConfig{})
			if err := conn.Handshake(ctx); err != nil {
				t.Fatal(err)
			}
			return conn
		}
		if time.Now().After(deadline) {
			t.Fatalf("switch listener %s never came up: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ascendingRule i matches IPv4 source 10.1.x.y exactly at priority i+1.
func ascendingRule(i int) *openflow.FlowMod {
	return &openflow.FlowMod{
		Header: openflow.Header{Version: openflow.Version, Type: openflow.TypeFlowMod},
		Match: openflow.Match{Wildcards: openflow.WildcardAll &^ (openflow.WildcardDlType | openflow.WildcardNwSrcMask),
			DlType: 0x0800, NwSrc: 0x0a010000 | uint32(i)},
		Command: openflow.FlowModAdd, Priority: uint16(1 + i), BufferID: openflow.NoBuffer,
		OutPort: openflow.PortNone, Actions: []openflow.Action{openflow.ActionOutput{Port: 2}},
	}
}

// scrapeInsertLatency reads the FLOW_MOD insert-latency histogram from a
// /metrics endpoint.
func scrapeInsertLatency(t *testing.T, url string) *dto.Histogram {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	mf, ok := mfs["pseudocong_tcam_insert_latency_seconds"]
	if !ok {
		t.Fatal("pseudocong_tcam_insert_latency_seconds not exported")
	}
	for _, m := range mf.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "cause" && l.GetValue() == "flow_mod" {
				return m.GetHistogram()
			}
		}
	}
	t.Fatal("no cause=flow_mod series")
	return nil
}

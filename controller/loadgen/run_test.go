package loadgen_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/controller"
	"github.com/pseudocong/pseudocong/controller/loadgen"
	"github.com/pseudocong/pseudocong/openflow"
)

// startController runs our controller with app on a loopback port.
func startController(t testing.TB, app controller.App) (addr string, core *controller.Core) {
	t.Helper()
	core = controller.NewCore(controller.Config{App: app})
	srv := controller.NewServer(controller.ServerConfig{Core: core})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ctx, ln)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return ln.Addr().String(), core
}

func TestRunAgainstReactiveController(t *testing.T) {
	for _, mode := range []loadgen.Mode{loadgen.Throughput, loadgen.Latency} {
		t.Run(mode.String(), func(t *testing.T) {
			addr, _ := startController(t, controller.NewReactive(controller.ReactiveConfig{}))
			var out bytes.Buffer
			res, err := loadgen.Run(context.Background(), loadgen.Config{
				Controller: "tcp:" + addr, Switches: 4, MACs: 100, Mode: mode,
				Duration: 200 * time.Millisecond, Loops: 3, Out: &out,
				// Setup ends when the controller has answered every ARP;
				// the bound is for a controller that never does.
				SetupTimeout: 30 * time.Second,
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Loops) != 4 || !res.Loops[0].Warmup || res.Loops[1].Warmup {
				t.Fatalf("loops %+v, want 1 warmup + 3", res.Loops)
			}
			// Every switch got answers (per switch over the whole run: other
			// processes on a loaded 2-core machine can stall single loops).
			perSwitch := make([]float64, 4)
			for _, l := range res.Loops {
				for sw, v := range l.PerSwitch {
					perSwitch[sw] += v
				}
			}
			for sw, v := range perSwitch {
				if v <= 0 {
					t.Errorf("switch %d got no responses", sw+1)
				}
			}
			if res.Avg <= 0 || res.Min > res.Avg || res.Avg > res.Max {
				t.Errorf("min/avg/max = %v/%v/%v", res.Min, res.Avg, res.Max)
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if len(lines) != 5 || !strings.HasPrefix(lines[0], "4   switches: flows/sec: ") ||
				!strings.HasPrefix(lines[4], "RESULT: 4 switches 3 tests min/max/avg/stdev = ") {
				t.Errorf("output:\n%s", out.String())
			}
			t.Logf("%s: %s\n%s", mode, res.Summary(), out.String())
		})
	}
}

// silentApp answers nothing: the load generator must report zero, not hang.
type silentApp struct{}

func (silentApp) SwitchConnected(controller.Switch)                 {}
func (silentApp) SwitchDisconnected(controller.Switch)              {}
func (silentApp) HandleMessage(controller.Switch, openflow.Message) {}

func TestRunCountsOnlyResponses(t *testing.T) {
	addr, _ := startController(t, silentApp{})
	res, err := loadgen.Run(context.Background(), loadgen.Config{
		Controller: addr, Switches: 2, MACs: 10, Duration: 100 * time.Millisecond, Loops: 2,
		// Connecting and the handshake get seconds: on a loaded machine
		// they took longer than the 300 ms this test once allowed for the
		// whole setup. The ARP phase, which a silent controller never
		// ends, is expected to run out: its 200 ms is the test's cost.
		SetupTimeout: 30 * time.Second, ARPTimeout: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Max != 0 {
		t.Errorf("a controller that answers nothing got %v responses/s", res.Max)
	}
}

// slowController accepts one switch and asks for its features only after
// delay, as a controller on a loaded machine may, then reads and discards
// whatever the switch sends.
func slowController(t *testing.T, delay time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { ln.Close(); <-done })
	go func() {
		defer close(done)
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		msgs, _ := (&openflow.Hello{Header: openflow.Header{Xid: 1}}).AppendBinary(nil)
		if _, err := nc.Write(msgs); err != nil {
			return
		}
		time.Sleep(delay) // the peer's slowness under test, not a wait for an event
		msgs, _ = (&openflow.FeaturesRequest{Header: openflow.Header{Xid: 2}}).AppendBinary(nil)
		if _, err := nc.Write(msgs); err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, nc)
	}()
	return ln.Addr().String()
}

// A handshake slower than the ARP phase's bound still succeeds: ARPTimeout
// bounds only the ARP phase, the handshake has the whole SetupTimeout.
// (With one short SetupTimeout for everything, as TestRunCountsOnlyResponses
// had, a slow handshake failed with "handshake: i/o timeout".)
func TestRunSlowHandshakeGetsSetupTimeout(t *testing.T) {
	addr := slowController(t, 500*time.Millisecond)
	res, err := loadgen.Run(context.Background(), loadgen.Config{
		Controller: addr, Switches: 1, MACs: 10, Duration: 50 * time.Millisecond, Loops: 1,
		SetupTimeout: 30 * time.Second, ARPTimeout: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatalf("a handshake of 500 ms under a 30 s setup timeout and a 100 ms ARP timeout: %v", err)
	}
	if res.Max != 0 {
		t.Errorf("a controller that answers nothing got %v responses/s", res.Max)
	}
}

func TestRunFailsWithoutController(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	// Refused at once; the timeout only bounds a hang.
	if _, err := loadgen.Run(context.Background(), loadgen.Config{Controller: addr, Switches: 1, SetupTimeout: 30 * time.Second}); err == nil {
		t.Fatal("Run succeeded without a controller")
	}
	if _, err := loadgen.Run(context.Background(), loadgen.Config{Controller: addr, MACs: 1}); err == nil {
		t.Fatal("Run accepted 1 MAC")
	}
}

func TestParseMode(t *testing.T) {
	for _, s := range []string{"throughput", "latency"} {
		m, err := loadgen.ParseMode(s)
		if err != nil || m.String() != s {
			t.Errorf("ParseMode(%q) = %v, %v", s, m, err)
		}
	}
	if _, err := loadgen.ParseMode("fast"); err == nil {
		t.Error("ParseMode(fast) accepted")
	}
}

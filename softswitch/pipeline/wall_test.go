package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/internal/metricsserver"
	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/softswitch"
)

// The live version of the must-show, affordable in a test: a switch on the
// wall clock with its passive OpenFlow listener and /metrics on loopback;
// 300 ascending-priority rules at 50 per second over TCP; the scraped
// insert-latency histogram's mean grows with occupancy for pica8-p3297
// and stays at zero for ideal. (The full 4 000 rules at 10/s take 400 s:
// see docs/dataplane.md for the manual command.)
func TestLiveSwitchInsertLatencyOverTCP(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 6 s of wall time")
	}
	for _, name := range []string{"pica8-p3297", "ideal"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			const (
				rules = 300
				split = 100
				rate  = 50
			)
			// Every wait below (handshake, barriers, scrapes) is for an
			// event; this bounds them all. The test takes 6 s of wall time
			// (the sending rate); the rest is slack for a stalled machine.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			prof := loadProfile(t, name, nil)
			reg := prometheus.NewRegistry()
			sw := softswitch.New(clock.Wall{}, softswitch.Config{TableCapacity: TableCapacity(prof, 0)})
			p, err := Attach(sw, Options{Profile: prof, Registerer: reg})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Stop()
			sess, err := softswitch.NewSession(sw, softswitch.SessionConfig{Listen: []string{"ptcp:0:127.0.0.1"}})
			if err != nil {
				t.Fatal(err)
			}
			go func() { _ = sess.Run(ctx) }()
			maddr, err := metricsserver.Serve(ctx, "127.0.0.1:0", reg, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}

			nc, err := net.Dial("tcp", sess.ListenAddrs()[0].String())
			if err != nil {
				t.Fatal(err)
			}
			conn := openflow.NewConn(nc, openflow.ConnConfig{})
			defer conn.Close()
			if err := conn.Handshake(ctx); err != nil {
				t.Fatal(err)
			}
			send := func(from, to int) {
				tick := time.NewTicker(time.Second / rate)
				defer tick.Stop()
				for i := from; i < to; i++ {
					fm := ruleFor(i, uint16(1+i))
					fm.Xid = 0 // let the connection number it
					if err := conn.Send(fm); err != nil {
						t.Fatal(err)
					}
					<-tick.C
				}
				// The reply comes once every FLOW_MOD sent so far is
				// installed (about 1 s of modelled CPU time in all).
				if err := conn.Barrier(ctx); err != nil {
					t.Fatal(err)
				}
			}
			scrape := func() *dto.Histogram {
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://%s/metrics", maddr), nil)
				if err != nil {
					t.Fatal(err)
				}
				resp, err := http.DefaultClient.Do(req)
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
					t.Fatal("insert latency histogram not exported")
				}
				return labelled(t, mf, map[string]string{"cause": "flow_mod"}).GetHistogram()
			}

			send(0, split)
			a := scrape()
			send(split, rules)
			b := scrape()
			if a.GetSampleCount() != split || b.GetSampleCount() != rules {
				t.Fatalf("inserts observed %d then %d, want %d then %d", a.GetSampleCount(), b.GetSampleCount(), split, rules)
			}
			first := a.GetSampleSum() / split
			later := (b.GetSampleSum() - a.GetSampleSum()) / (rules - split)
			t.Logf("%s: mean insert latency rules 1-%d %.3f ms, %d-%d %.3f ms", name, split, first*1e3, split+1, rules, later*1e3)
			if prof.TCAM.Timing.DriverPerMove == 0 && prof.TCAM.Timing.DriverPerWrite == 0 {
				if b.GetSampleSum() != 0 {
					t.Errorf("ideal profile: insert latency sum %g, want 0", b.GetSampleSum())
				}
				return
			}
			if !(later > 2*first) {
				t.Errorf("insert latency does not grow with occupancy: %g then %g", first, later)
			}
			if n, _ := p.Occupancy(); n != rules {
				t.Errorf("TCAM holds %d rules, want %d", n, rules)
			}
		})
	}
}

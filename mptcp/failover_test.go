package mptcp

import (
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/tcp"
)

// A subflow whose path goes dark gives up after its retries; the data it
// held is reinjected on the other subflow and the connection goes on
// (without that, the data-level hole would block the window for ever).
func TestFailedSubflowDataReinjected(t *testing.T) {
	sim := clock.NewSim(epoch)
	var client, server *Conn
	dark := false
	wire := func(toSrv bool) func(int, *tcp.Segment) {
		return func(path int, s *tcp.Segment) {
			if dark && path == 1 {
				return
			}
			cp := *s
			// Path 1 is the short one: the scheduler prefers it, so it
			// holds data when it goes dark.
			d := 40 * time.Millisecond
			if path == 1 {
				d = 10 * time.Millisecond
			}
			sim.AfterFunc(d, func() {
				if toSrv {
					server.Input(path, &cp)
				} else {
					client.Input(path, &cp)
				}
			})
		}
	}
	tc := tcp.DefaultConfig()
	tc.Profile = tcp.NS3() // six retries: the subflow fails within minutes
	base := Config{Clock: sim, Subflow: tc, RcvBuf: 64 << 10, Seed: 5, Policy: Same{}}
	cc, sc := base, base
	cc.Output, cc.Key = wire(true), 1
	sc.Output, sc.Key = wire(false), 2
	var err error
	if client, err = NewClient(cc, 2); err != nil {
		t.Fatal(err)
	}
	if server, err = NewServer(sc); err != nil {
		t.Fatal(err)
	}
	client.Bulk()
	if err := client.Connect(); err != nil {
		t.Fatal(err)
	}
	sim.AfterFunc(2*time.Second, func() { dark = true })
	if err := sim.TryRunUntil(epoch.Add(2 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if len(client.subs) != 2 || !client.subs[1].joined {
		t.Fatal("the second subflow did not join")
	}
	if err := sim.TryRunUntil(epoch.Add(3 * time.Minute)); err != nil {
		t.Fatal(err)
	}
	if !client.subs[1].dead {
		t.Fatalf("subflow 1 did not give up (%d timeouts)", client.subs[1].timeouts)
	}
	atFail := server.Received()
	if err := sim.TryRunUntil(epoch.Add(3*time.Minute + 20*time.Second)); err != nil {
		t.Fatal(err)
	}
	if got := server.Received() - atFail; got < 1<<20 {
		t.Fatalf("%d bytes delivered in the 20 s after subflow 1 failed: the connection is stuck", got)
	}
	if client.subs[0].reinjectedBytes == 0 {
		t.Fatal("nothing reinjected from the failed subflow")
	}
}

package mptcp

import (
	"testing"
	"time"
)

func twoPaths(d1, d2 time.Duration, l1, l2 float64) []PathConfig {
	return []PathConfig{{Rate: 5e6, Delay: d1, Loss: l1, Queue: 100}, {Rate: 5e6, Delay: d2, Loss: l2, Queue: 100}}
}

// The handshakes: MP_CAPABLE on subflow 0, MP_JOIN on subflow 1, both
// carry data, and what the server delivers is exactly the data-level
// stream in order.
func TestHandshakesAndBothSubflowsCarryData(t *testing.T) {
	var maxAhead uint64
	var windowOK = true
	res, err := run(RunConfig{Paths: twoPaths(40*ms, 40*ms, 0, 0), RcvBuf: 64 << 10, Duration: 10 * time.Second, Warmup: time.Second, Seed: 3},
		func(c, s *Conn) {
			if !c.mpOK {
				return
			}
			// The sender never runs past the right edge it was given,
			// and the server never holds more than its buffer.
			if c.dataNxt > c.rightEdge || s.oooBytes > uint64(s.cfg.RcvBuf) {
				windowOK = false
			}
			maxAhead = max(maxAhead, c.dataNxt-c.dataUna)
			if s.received != s.rcvNxt {
				t.Fatalf("server delivered %d bytes, its data-level rcv_nxt is %d", s.received, s.rcvNxt)
			}
		})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Subflows) != 2 || !res.Subflows[0].Joined || !res.Subflows[1].Joined {
		t.Fatalf("subflows %+v: want two joined", res.Subflows)
	}
	for i, sf := range res.Subflows {
		if sf.TCP.BytesSent < 1<<20 {
			t.Errorf("subflow %d sent %d bytes: want both carrying data", i, sf.TCP.BytesSent)
		}
	}
	if !windowOK {
		t.Error("the sender ran past the connection-level window, or the server's buffer overflowed")
	}
	if maxAhead < 32<<10 {
		t.Errorf("at most %d bytes were outstanding at the data level: the window (64 KiB) was never used", maxAhead)
	}
	if res.DupBytes != 0 {
		t.Errorf("%d duplicate data-level bytes without any loss", res.DupBytes)
	}
	// No loss, 2 × 5 Mbit/s, RTT 80 ms: a 64 KiB window gives at most
	// 64 KiB / 80 ms = 6.5 Mbit/s; the paths give about 9.5.
	if res.GoodputMbps < 4 || res.GoodputMbps > 6.6 {
		t.Errorf("goodput %.2f Mbit/s: want between 4 and the window's 6.5", res.GoodputMbps)
	}
}

// Receive-buffer blocking emerges from the window: with a long and a
// short path and a small buffer, the short path's subflow has window to
// spare while the buffer is full of data waiting for the long path.
func TestReceiveBufferBlockingEmerges(t *testing.T) {
	share := func(d1 time.Duration, buf int) float64 {
		res, err := Run(RunConfig{Paths: twoPaths(d1, 40*ms, 0.01, 0.01), RcvBuf: buf, Duration: 40 * time.Second, Warmup: 5 * time.Second, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		return res.BlockedShare
	}
	sym, asym, asymBig := share(40*ms, 32<<10), share(160*ms, 32<<10), share(160*ms, 256<<10)
	t.Logf("blocked share: 40/40 32K %.3f, 160/40 32K %.3f, 160/40 256K %.3f", sym, asym, asymBig)
	if !(asym > sym && asym > 0.1) {
		t.Errorf("160/40 ms blocked %.3f of the time, 40/40 %.3f: want more with the asymmetry, and noticeably", asym, sym)
	}
	if !(asymBig < asym/2) {
		t.Errorf("a 256 KiB buffer blocked %.3f, 32 KiB %.3f: want far less with the larger buffer", asymBig, asym)
	}
}

// On a timeout the policy's pick carries the data-level retransmission:
// RTX-SAME reinjects nothing, RTX-CWND reinjects onto the other subflow.
func TestTimeoutReinjection(t *testing.T) {
	cfg := RunConfig{Paths: twoPaths(40*ms, 40*ms, 0.01, 0.10), RcvBuf: 64 << 10, Duration: 60 * time.Second, Warmup: time.Second, Seed: 2, Profile: "ns3", NoSACK: true}
	cfg.Policy = "rtx-same"
	same, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Policy = "rtx-cwnd"
	cw, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if same.Subflows[1].Timeouts == 0 || cw.Subflows[1].Timeouts == 0 {
		t.Fatalf("no timeouts on the 10 %% subflow (%d, %d): the test needs some", same.Subflows[1].Timeouts, cw.Subflows[1].Timeouts)
	}
	for i, sf := range same.Subflows {
		if sf.ReinjectedBytes != 0 {
			t.Errorf("rtx-same: subflow %d carried %d reinjected bytes, want 0", i, sf.ReinjectedBytes)
		}
	}
	if cw.Subflows[0].ReinjectedBytes == 0 {
		t.Errorf("rtx-cwnd: the clean subflow carried no reinjected bytes after %d timeouts of the lossy one", cw.Subflows[1].Timeouts)
	}
	if cw.DupBytes == 0 {
		t.Errorf("rtx-cwnd: no duplicates at the receiver although data was sent twice")
	}
}

// Coupled (LIA) subflows on two equal paths take no more than uncoupled
// ones would (RFC 6356's "do no harm"): less aggressive in total.
func TestLIALessAggressiveThanUncoupled(t *testing.T) {
	cfg := RunConfig{Paths: twoPaths(40*ms, 40*ms, 0.005, 0.005), RcvBuf: 1 << 20, Duration: 60 * time.Second, Warmup: 5 * time.Second, Seed: 4}
	lia, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Uncoupled = true
	unc, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("goodput: LIA %.2f, uncoupled Reno %.2f Mbit/s", lia.GoodputMbps, unc.GoodputMbps)
	if !(lia.GoodputMbps < unc.GoodputMbps) {
		t.Errorf("LIA %.2f Mbit/s, uncoupled %.2f: want LIA below", lia.GoodputMbps, unc.GoodputMbps)
	}
}

func TestRunDeterministic(t *testing.T) {
	cfg := RunConfig{Paths: twoPaths(80*ms, 40*ms, 0.01, 0.05), RcvBuf: 32 << 10, Policy: "rtx-asap", Duration: 20 * time.Second, Warmup: time.Second, Seed: 9}
	a, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Run(cfg)
	if a.GoodputMbps != b.GoodputMbps || a.BlockedShare != b.BlockedShare || a.Events != b.Events {
		t.Fatalf("same seed, different runs: %+v vs %+v", a, b)
	}
}

func TestRunConfigErrors(t *testing.T) {
	for _, c := range []RunConfig{
		{Duration: time.Second, RcvBuf: 1 << 16},
		{Paths: twoPaths(ms, ms, 0, 0), Duration: time.Second, Warmup: 2 * time.Second, RcvBuf: 1 << 16},
		{Paths: twoPaths(ms, ms, 0, 1), Duration: time.Second, RcvBuf: 1 << 16},
		{Paths: twoPaths(ms, ms, 0, 0), Duration: time.Second, RcvBuf: 100},
		{Paths: twoPaths(ms, ms, 0, 0), Duration: time.Second, RcvBuf: 1 << 16, Policy: "nope"},
	} {
		if _, err := Run(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

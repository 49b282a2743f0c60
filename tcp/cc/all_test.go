package cc

import (
	"hash/fnv"
	"math/rand/v2"
	"testing"
	"time"
)

// fuzzSender drives any algorithm through a long seeded script of what a
// sender reports (ACKs with varying RTT and ECE, fast recoveries, CWR,
// RTOs, idle restarts, undo), following the contract in cc.go, and fails
// on any window out of bounds. It returns a hash of the whole trace.
func fuzzSender(t *testing.T, name string, seed uint64, clamp uint32, ecn bool) uint64 {
	t.Helper()
	a, err := New(name)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 99))
	c := &Conn{Cwnd: 10, Ssthresh: InfiniteSsthresh, CwndClamp: clamp, MSS: 1448, Now: t0, ECN: ecn, Seed: seed, Delivered: 0}
	ctl, isCtl := a.(Controller)
	a.Init(c)
	h := fnv.New64a()
	var buf [8]byte
	put := func(v uint64) {
		for i := range buf {
			buf[i] = byte(v >> (8 * i))
		}
		h.Write(buf[:])
	}
	check := func(step int, what string) {
		if c.Cwnd == 0 || c.Cwnd > c.CwndClamp {
			t.Fatalf("%s step %d after %s: cwnd %d (clamp %d)", name, step, what, c.Cwnd, c.CwndClamp)
		}
		if c.Ssthresh < 2 {
			t.Fatalf("%s step %d after %s: ssthresh %d", name, step, what, c.Ssthresh)
		}
		if c.PacingRate < 0 {
			t.Fatalf("%s step %d: pacing %v", name, step, c.PacingRate)
		}
		put(uint64(c.Cwnd))
		put(uint64(c.Ssthresh))
		put(uint64(c.PacingRate))
	}
	ssthresh := func(step int) {
		s := a.SSThresh(c)
		if s < 2 {
			t.Fatalf("%s step %d: SSThresh returned %d", name, step, s)
		}
		c.Ssthresh = s
	}
	base := time.Duration(5+rng.IntN(100)) * time.Millisecond
	recoveryLeft := 0
	var una uint32 = 1
	c.SndUna, c.SndNxt = una, una+c.Cwnd*uint32(c.MSS)
	for step := range 20000 {
		c.AppLimited = rng.IntN(50) == 0
		switch r := rng.IntN(1000); {
		case r < 15 && c.Phase == Open: // fast retransmit
			a.SetPhase(c, Recovery)
			c.Phase = Recovery
			ssthresh(step)
			recoveryLeft = 1 + rng.IntN(int(c.Cwnd)+1)
			check(step, "recovery")
		case r < 20 && c.Phase == Open && ecn: // ECE → CWR
			a.SetPhase(c, CWR)
			c.Phase = CWR
			ssthresh(step)
			recoveryLeft = 1 + rng.IntN(int(c.Cwnd)+1)
			check(step, "cwr")
		case r < 23: // RTO
			c.Phase = Loss
			ssthresh(step)
			a.Event(c, EventLoss)
			c.Cwnd = 1
			a.SetPhase(c, Loss)
			c.Lost += uint64(c.InFlight)
			c.InFlight = 0
			recoveryLeft = 1 + rng.IntN(20)
			check(step, "rto")
		case r < 26 && c.Phase == Open: // idle, then restart
			c.LastSend = c.Now
			c.Now = c.Now.Add(time.Duration(rng.IntN(3000)) * time.Millisecond)
			c.InFlight = 0
			a.Event(c, EventTxStart)
			check(step, "idle")
		case r < 28 && c.Phase == Open: // undo a spurious reduction
			c.Cwnd = min(max(a.Undo(c), 1), c.CwndClamp)
			check(step, "undo")
		default: // an ACK
			n := uint32(1 + rng.IntN(3))
			c.Now = c.Now.Add(time.Duration(rng.IntN(int(base/time.Microsecond)/4+1)) * time.Microsecond)
			rtt := base + time.Duration(rng.IntN(int(base/time.Microsecond)+1))*time.Microsecond
			if rng.IntN(20) == 0 {
				rtt = 0 // Karn
			}
			prior := c.InFlight
			c.InFlight = min(c.Cwnd, max(c.InFlight, n)+uint32(rng.IntN(3))) - min(n, c.InFlight)
			una += n * uint32(c.MSS)
			c.SndUna = una
			c.Delivered += uint64(n)
			losses := uint32(0)
			if c.Phase == Recovery && rng.IntN(4) == 0 {
				losses = 1
				c.Lost++
			}
			if rtt > 0 {
				c.SRTT = rtt
				if c.MinRTT == 0 || rtt < c.MinRTT {
					c.MinRTT = rtt
				}
			}
			ece := ecn && rng.IntN(10) == 0
			a.PktsAcked(c, AckSample{Acked: n, RTT: rtt, ECE: ece, InFlight: prior})
			if isCtl {
				rs := RateSample{
					Delivered:      int64(c.Cwnd),
					Interval:       base + time.Duration(rng.IntN(10))*time.Millisecond,
					PriorDelivered: c.Delivered - min(c.Delivered, uint64(c.Cwnd)),
					RTT:            rtt,
					Losses:         losses,
					AckedSacked:    n,
					PriorInFlight:  prior,
					AppLimited:     c.AppLimited,
				}
				ctl.Control(c, &rs)
				c.AppLimitedMark = 0
			} else if c.Phase == Open || c.Phase == Disorder {
				a.CongAvoid(c, n)
			}
			check(step, "ack")
			if recoveryLeft > 0 {
				if recoveryLeft--; recoveryLeft == 0 {
					// Leaving Recovery/CWR sets cwnd to ssthresh, except
					// for a Controller (Linux's tcp_end_cwnd_reduction).
					if !isCtl && (c.Phase == Recovery || c.Phase == CWR) {
						c.Cwnd = min(c.Ssthresh, c.CwndClamp)
					}
					c.Phase = Open
					a.SetPhase(c, Open)
					a.Event(c, EventCompleteCWR)
					check(step, "exit")
				}
			}
			c.SndNxt = una + c.Cwnd*uint32(c.MSS)
		}
		// The receiver's side of the same connection, for DCTCP.
		if _, ok := a.(ECNOwner); ok && ecn {
			c.Ack.RcvNxt += 1448
			c.Ack.Pending = rng.IntN(2) == 0
			if rng.IntN(5) == 0 {
				a.Event(c, EventECNIsCE)
			} else {
				a.Event(c, EventECNNoCE)
			}
			put(uint64(c.Ack.FlushSeq))
		}
	}
	return h.Sum64()
}

// Every registered algorithm keeps 1 ≤ cwnd ≤ CwndClamp and ssthresh ≥ 2
// through a long random script, and the same script gives the same trace.
func TestEveryAlgorithmInvariants(t *testing.T) {
	if testing.Short() {
		t.Skip("long single-goroutine simulation: the race phase (-short) leaves it to the integration phase")
	}
	names := Names()
	want := []string{"bbr", "bic", "cubic", "dctcp", "highspeed", "lia", "newreno", "reno", "vegas", "yeah"}
	if len(names) != len(want) {
		t.Fatalf("registered %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("registered %v, want %v", names, want)
		}
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			for _, tc := range []struct {
				seed  uint64
				clamp uint32
				ecn   bool
			}{{1, 1 << 20, false}, {2, 64, true}, {3, 8, false}, {4, 1 << 16, true}} {
				h1 := fuzzSender(t, name, tc.seed, tc.clamp, tc.ecn)
				h2 := fuzzSender(t, name, tc.seed, tc.clamp, tc.ecn)
				if h1 != h2 {
					t.Fatalf("seed %d: two runs of the same script differ", tc.seed)
				}
			}
			if fuzzSender(t, name, 5, 1<<20, false) == fuzzSender(t, name, 6, 1<<20, false) {
				t.Fatal("different scripts gave the same trace: the hash sees nothing")
			}
			a, _ := New(name)
			if a.Name() != name {
				t.Fatalf("New(%q).Name() = %q", name, a.Name())
			}
		})
	}
}

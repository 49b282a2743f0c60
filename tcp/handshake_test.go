package tcp

import (
	"fmt"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/probes"
)

func secs(v ...float64) []time.Duration {
	out := make([]time.Duration, len(v))
	for i, x := range v {
		out[i] = time.Duration(x * float64(time.Second))
	}
	return out
}

// TestSYNRetransmissionTimings drops every SYN and checks when each one
// left and when connect gave up, per profile, against the numbers the
// stacks are known for (and, for the profiles package probes also has,
// against its measured/derived schedule).
func TestSYNRetransmissionTimings(t *testing.T) {
	cases := []struct {
		prof   Profile
		syns   []time.Duration
		giveUp time.Duration
		probe  func() probes.TimerProfile
	}{
		{Linux(), secs(0, 1, 3, 7, 15, 31, 63), 127 * time.Second, probes.Linux},
		{LinuxLinear(), secs(0, 1, 2, 3, 4, 5, 7), 11 * time.Second, probes.LinuxLinear},
		{Berkeley(), secs(0, 5.8, 24), 75 * time.Second, probes.Berkeley},
		{NS3(), secs(0, 3, 9, 21, 45, 93), 189 * time.Second, nil},
	}
	for _, tc := range cases {
		t.Run(tc.prof.Name, func(t *testing.T) {
			ca, cb := testConfig(), testConfig()
			ca.Profile = tc.prof
			p := newPipe(t, ca, cb, 10*time.Millisecond)
			p.filter = func(dir, i int, s *Segment) (time.Duration, bool) { return 0, dir == 0 }
			var failedAt time.Duration
			var failErr error
			p.a.Handle(Handlers{Failed: func(err error) { failedAt, failErr = p.sim.Elapsed(), err }})
			p.start()
			p.sim.Run()
			var got []time.Duration
			for _, s := range p.toB {
				if s.seg.Flags&FlagSYN == 0 {
					t.Fatalf("non-SYN segment %v", &s.seg)
				}
				got = append(got, s.at)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.syns) {
				t.Errorf("SYNs at %v, want %v", got, tc.syns)
			}
			if failErr != ErrHandshakeTimeout || failedAt != tc.giveUp {
				t.Errorf("failed at %v with %v, want %v with %v", failedAt, failErr, tc.giveUp, ErrHandshakeTimeout)
			}
			st := p.a.Stats()
			if st.TCPSynRetrans != uint64(len(tc.syns)-1) || st.TCPTimeouts != uint64(len(tc.syns)) {
				t.Errorf("TCPSynRetrans %d TCPTimeouts %d, want %d and %d", st.TCPSynRetrans, st.TCPTimeouts, len(tc.syns)-1, len(tc.syns))
			}
			if tc.probe != nil {
				pp := tc.probe()
				if fmt.Sprint(pp.SYN) != fmt.Sprint(got[1:]) || pp.SYNGiveUp != failedAt {
					t.Errorf("probes' %s profile says SYNs at %v, give up %v; we did %v, %v", pp.Name, pp.SYN, pp.SYNGiveUp, got[1:], failedAt)
				}
			}
		})
	}
}

// TestSYNACKRetransmission: the listener retransmits its SYN-ACK on its own
// schedule when the handshake's ACK never comes, and a duplicate SYN gets
// the SYN-ACK again without moving the timer.
func TestSYNACKRetransmission(t *testing.T) {
	for _, tc := range []struct {
		prof Profile
		at   []time.Duration
	}{
		{Linux(), secs(0, 1, 3, 7, 15, 31)}, // tcp_synack_retries 5
		{NS3(), secs(0, 3, 9, 21, 45, 93)},
		{Berkeley(), secs(0, 5.8, 24)},
	} {
		t.Run(tc.prof.Name, func(t *testing.T) {
			ca, cb := testConfig(), testConfig()
			cb.Profile = tc.prof
			p := newPipe(t, ca, cb, 10*time.Millisecond)
			// Only the first SYN reaches b; nothing b sends arrives.
			p.filter = func(dir, i int, s *Segment) (time.Duration, bool) { return 0, dir == 1 || i > 0 }
			p.start()
			p.sim.RunUntil(epoch.Add(300 * time.Second))
			var got []time.Duration
			for _, s := range p.toA {
				got = append(got, s.at-p.toA[0].at)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.at) {
				t.Errorf("SYN-ACKs at %v, want %v", got, tc.at)
			}
			if p.b.State() != Failed {
				t.Errorf("listener in state %v, want failed", p.b.State())
			}
		})
	}
}

// TestHandshakeLossLinuxBehaviour: after a SYN retransmission the initial
// window is one segment and, with no RTT sample, the first data RTO is 3 s.
func TestHandshakeLossLinuxBehaviour(t *testing.T) {
	p := newPipe(t, testConfig(), testConfig(), 10*time.Millisecond)
	p.filter = func(dir, i int, s *Segment) (time.Duration, bool) {
		return 0, dir == 0 && i == 0 // the first SYN
	}
	p.start()
	p.sim.RunUntil(epoch.Add(1500 * time.Millisecond))
	if p.a.State() != Established {
		t.Fatalf("state %v", p.a.State())
	}
	in := p.a.Info()
	if in.Cwnd != 1 || in.RTO != 3*time.Second {
		t.Errorf("after a lost SYN: cwnd %d RTO %v, want 1 and 3s", in.Cwnd, in.RTO)
	}
	q := newPipe(t, testConfig(), testConfig(), 10*time.Millisecond)
	q.start()
	q.sim.RunUntil(epoch.Add(time.Second))
	in = q.a.Info()
	if in.Cwnd != 10 || in.SRTT != 20*time.Millisecond || in.RTO != 220*time.Millisecond {
		t.Errorf("clean handshake: cwnd %d SRTT %v RTO %v, want 10, 20ms, 220ms (20ms + 200ms floor on the variance)", in.Cwnd, in.SRTT, in.RTO)
	}
}

func TestNegotiation(t *testing.T) {
	ca, cb := testConfig(), testConfig()
	cb.RcvBuf = 1 << 20
	ca.ECN, cb.ECN = true, true
	cb.SACK = false
	p := newPipe(t, ca, cb, time.Millisecond)
	p.start()
	p.sim.RunUntil(epoch.Add(time.Second))
	a, b := p.a, p.b
	if a.State() != Established || b.State() != Established {
		t.Fatalf("states %v %v", a.State(), b.State())
	}
	if a.sackOK || b.sackOK || !a.tsOK || !a.ecnOK || !b.ecnOK || !a.wsOK {
		t.Errorf("sack %v/%v ts %v ecn %v/%v ws %v", a.sackOK, b.sackOK, a.tsOK, a.ecnOK, b.ecnOK, a.wsOK)
	}
	if b.rcvScale != 5 || a.sndScale != 5 {
		t.Errorf("b's window scale %d, a uses %d; want 5 for a 1 MiB buffer", b.rcvScale, a.sndScale)
	}
	if a.MSS() != 1448 {
		t.Errorf("mss %d, want 1448 (1460 less the timestamp option)", a.MSS())
	}
}

package tcp

import (
	"testing"
	"time"
)

// TestRwndLimitedCwndBounded: a flow whose receive window (64 KiB, 45
// segments) is far below the path's BDP never fills cwnd, so by the cc
// contract (CongAvoid only when cwnd-limited, Linux's
// tcp_is_cwnd_limited) its window must not grow past twice what it had
// in flight. Before, the sender remembered one early cwnd-limited moment
// for the rest of the flow and cwnd grew by every ACK without bound.
func TestRwndLimitedCwndBounded(t *testing.T) {
	for _, alg := range []string{"newreno", "cubic"} {
		ca, cb := testConfig(), testConfig()
		ca.CC = alg
		cb.RcvBuf = 64 << 10
		p := newPipe(t, ca, cb, 20*time.Millisecond)
		p.rate = 1_000_000_000
		p.transfer(50_000_000, 60*time.Second)
		rwnd := uint32(cb.RcvBuf / p.a.MSS())
		if got := p.a.Info().Cwnd; got > 2*rwnd+1 {
			t.Errorf("%s: cwnd %d segments after a receive-window-limited transfer, want at most 2×rwnd+1 = %d", alg, got, 2*rwnd+1)
		}
		if st := p.a.Stats(); st.RetransSegs != 0 {
			t.Errorf("%s: %d retransmissions on a lossless path", alg, st.RetransSegs)
		}
	}
}

package cc

import "testing"

func TestRenoSlowStartThenAdditiveIncrease(t *testing.T) {
	a, err := New("reno")
	if err != nil {
		t.Fatal(err)
	}
	c := &Conn{Cwnd: 10, Ssthresh: 16, CwndClamp: 1 << 20, MSS: 1460}
	a.Init(c)
	a.CongAvoid(c, 10) // 10 → 16 (capped at ssthresh), 4 acked left over → cnt 4
	if c.Cwnd != 16 || c.CwndCnt != 4 {
		t.Fatalf("after slow start: cwnd %d cnt %d, want 16 and 4", c.Cwnd, c.CwndCnt)
	}
	a.CongAvoid(c, 12) // cnt 16 → one more segment
	if c.Cwnd != 17 || c.CwndCnt != 0 {
		t.Fatalf("after one window: cwnd %d cnt %d, want 17 and 0", c.Cwnd, c.CwndCnt)
	}
	if got := a.SSThresh(c); got != 8 {
		t.Fatalf("ssthresh %d, want 8", got)
	}
	c.Cwnd = 1
	if got := a.Undo(c); got != 17 {
		t.Fatalf("undo %d, want the prior cwnd 17", got)
	}
}

func TestUnknownAlgorithm(t *testing.T) {
	if _, err := New("nope"); err == nil {
		t.Fatal("no error for an unknown algorithm")
	}
}

package softswitch

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/pseudocong/pseudocong/openflow"
)

// countingHandler counts the log records with a given message.
type countingHandler struct {
	msg string
	n   *atomic.Int64
}

func (h countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h countingHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.n.Add(1)
	}
	return nil
}
func (h countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h countingHandler) WithGroup(string) slog.Handler      { return h }

// A peer sending ERRORs as fast as it can gets about one log line a second,
// and every ERROR is counted.
func TestPeerErrorsLogLimitedAndCounted(t *testing.T) {
	reg := prometheus.NewRegistry()
	met, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	var lines atomic.Int64
	log := slog.New(countingHandler{msg: "error from peer", n: &lines})
	_, _, addr, _ := mgmtSwitchWith(t, Config{Metrics: met, Logger: log}, SessionConfig{})
	c := rawClient(t, addr, "")
	const n = 10000
	var buf []byte
	for i := 1; i <= n; i++ {
		buf = append(buf, msgBytes(t, &openflow.ErrorMsg{Header: openflow.Header{Xid: uint32(i)},
			Type: openflow.ErrorTypeBadRequest, Code: uint16(openflow.BadRequestBadType)})...)
	}
	began := time.Now()
	writeBytes(t, c, buf)
	count := func() float64 {
		return counterSum(t, reg, "pseudocong_switch_openflow_errors_received_total",
			map[string]string{"role": "service", "type": "BAD_REQUEST"})
	}
	waitFor(t, 10*time.Second, "10 000 errors counted", func() bool { return count() == n })
	limit := int64(time.Since(began)/time.Second) + 2
	if got := lines.Load(); got < 1 || got > limit {
		t.Fatalf("%d log lines for %d ERRORs in %v, want 1..%d", got, n, time.Since(began), limit)
	}
}

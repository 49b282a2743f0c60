package controller

import (
	"context"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/openflow"
)

// BenchmarkHalfOpenConnMemory measures what connections that never
// complete the handshake cost the controller: n peers connect from
// 127.0.0.1, send half a HELLO and wait. Reported: live heap after a GC and
// resident memory, in total and per connection attempted (resident memory
// includes the test's own client sockets, which are small: no goroutine,
// no buffer), and how many connections the controller held.
//
// "uncapped" is the cost of one connection; "defaults" is the attack of the
// defect report (3 000 half-open connections from one address) against the
// default caps. Run one at a time, since resident memory does not shrink:
//
//	go test -run x -bench 'HalfOpenConnMemory/uncapped' -benchtime 1x ./controller/
//	go test -run x -bench 'HalfOpenConnMemory/defaults' -benchtime 1x ./controller/
func BenchmarkHalfOpenConnMemory(b *testing.B) {
	cases := []struct {
		name string
		n    int
		cfg  ServerConfig
	}{
		{"uncapped", 1000, ServerConfig{MaxConns: -1, MaxHandshakesPerPeer: -1}},
		{"defaults", 3000, ServerConfig{}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				heap, rss, held := halfOpenCost(b, tc.cfg, tc.n)
				b.ReportMetric(heap/float64(tc.n), "heap-B/conn")
				b.ReportMetric(rss/float64(tc.n), "rss-B/conn")
				b.ReportMetric(heap/(1<<20), "heap-MB")
				b.ReportMetric(rss/(1<<20), "rss-MB")
				b.ReportMetric(float64(held), "held")
			}
		})
	}
}

func halfOpenCost(b *testing.B, cfg ServerConfig, n int) (heap, rss float64, held int) {
	core := NewCore(Config{App: NewReactive(ReactiveConfig{})})
	cfg.Core, cfg.EchoInterval = core, -1
	srv := NewServer(cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	defer func() {
		cancel()
		<-done
	}()

	heap0, rss0 := memNow()
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	hello := header(1, openflow.TypeHello, 8, 1)
	for range n {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		conns = append(conns, c)
		_, _ = c.Write(hello[:4]) // fails only if already refused
	}
	// A held connection gets the controller's HELLO, so its goroutine is in
	// (or about to enter) the read that waits for the rest of ours; a
	// refused one is closed.
	for _, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.ReadFull(c, make([]byte, 8)); err == nil {
			held++
		} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
			b.Fatalf("no HELLO and no close from the controller: %v", err)
		}
	}
	heap1, rss1 := memNow()
	return float64(heap1 - heap0), float64(rss1 - rss0), held
}

// memNow returns the live heap after a GC and the resident set size.
func memNow() (heap, rss int64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc) + int64(ms.StackInuse), rssBytes()
}

func rssBytes() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

package controller

import (
	"bufio"
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/pseudocong/pseudocong/openflow"
)

// dialRawFrom is dialRaw with a chosen source address: all of 127/8 is
// loopback, so 127.0.0.2 is another peer to the controller's per-peer cap.
func dialRawFrom(t *testing.T, addr, src string) *rawSwitch {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawSwitch{t: t, nc: nc, br: bufio.NewReader(nc)}
}

// dialSwitchFrom is dialSwitch from src.
func dialSwitchFrom(t *testing.T, addr, src string, dpid uint64) *rawSwitch {
	t.Helper()
	s := dialRawFrom(t, addr, src)
	s.send(&openflow.Hello{Header: openflow.Header{Xid: 1}})
	s.expect(openflow.TypeHello)
	req := s.expect(openflow.TypeFeaturesRequest)
	s.send(&openflow.FeaturesReply{Header: openflow.Header{Xid: req.GetXid()}, DatapathID: dpid, NBuffers: 256, NTables: 1,
		Ports: []openflow.PhyPort{{PortNo: 1, Name: "p1"}, {PortNo: 2, Name: "p2"}}})
	s.expect(openflow.TypeSetConfig)
	return s
}

// dialIdle opens a connection from src that sends half a HELLO and
// nothing more, and waits until the controller has taken it in (its HELLO
// arrived), so that the connection is counted.
func dialIdle(t *testing.T, addr, src string) *rawSwitch {
	t.Helper()
	s := dialRawFrom(t, addr, src)
	s.sendRaw(header(1, openflow.TypeHello, 8, 1)[:4])
	s.expect(openflow.TypeHello)
	return s
}

// expectRefused: the controller closes the connection without a word (no
// HELLO: it was refused on accept).
func expectRefused(t *testing.T, s *rawSwitch) {
	t.Helper()
	// Generous: the close is immediate, but the machine may be busy.
	if got := s.expectClosed(5 * time.Second); len(got) != 0 {
		t.Fatalf("refused connection got %d messages, first %v", len(got), got[0].MsgType())
	}
}

// TestServerCapsHandshakesPerPeer: one peer holding MaxHandshakesPerPeer
// half-open connections gets its next one refused and counted, while a
// switch from another address connects and is served, and connected
// switches do not count against the per-peer cap.
func TestServerCapsHandshakesPerPeer(t *testing.T) {
	const perPeer = 4
	// The idle connections must outlive the test, not the handshake timeout.
	addr, core, metrics := startServer(t, NewReactive(ReactiveConfig{}),
		ServerConfig{MaxHandshakesPerPeer: perPeer, HandshakeTimeout: time.Minute, EchoInterval: -1})
	for range perPeer {
		dialIdle(t, addr, "127.0.0.1")
	}
	if got := testutil.ToFloat64(metrics.handshakingConns); got != perPeer {
		t.Errorf("handshaking_connections = %v, want %d", got, perPeer)
	}
	expectRefused(t, dialRawFrom(t, addr, "127.0.0.1"))
	waitFor(t, "the refusal counted", func() bool {
		return testutil.ToFloat64(metrics.refused[refusePeerHandshakes]) == 1
	})

	// Another peer is not affected, and its connected switches do not
	// count: more than perPeer of them connect one after the other.
	var sws []*rawSwitch
	for i := range perPeer + 2 {
		sws = append(sws, dialSwitchFrom(t, addr, "127.0.0.2", uint64(i+1)))
	}
	waitFor(t, "the other peer's switches connected", func() bool { return core.Connected() == perPeer+2 })
	checkService(t, sws[0], 9)
	if got := testutil.ToFloat64(metrics.refused[refusePeerHandshakes]); got != 1 {
		t.Errorf("connections_refused_total{peer_handshakes} = %v, want 1", got)
	}
	if got := testutil.ToFloat64(metrics.refused[refuseMaxConns]); got != 0 {
		t.Errorf("connections_refused_total{max_conns} = %v, want 0", got)
	}
	if got := testutil.ToFloat64(metrics.openConns); got != 2*perPeer+2 {
		t.Errorf("open_connections = %v, want %d", got, 2*perPeer+2)
	}
}

// TestServerCapsConns: beyond MaxConns every new connection is refused and
// counted, whatever its address; once one closes, a switch gets in again.
func TestServerCapsConns(t *testing.T) {
	const maxConns = 3
	addr, core, metrics := startServer(t, NewReactive(ReactiveConfig{}),
		ServerConfig{MaxConns: maxConns, HandshakeTimeout: time.Minute, EchoInterval: -1})
	idle := []*rawSwitch{dialIdle(t, addr, "127.0.0.1"), dialIdle(t, addr, "127.0.0.3")}
	dialSwitchFrom(t, addr, "127.0.0.4", 1)
	expectRefused(t, dialRawFrom(t, addr, "127.0.0.2"))
	expectRefused(t, dialRawFrom(t, addr, "127.0.0.1"))
	waitFor(t, "the refusals counted", func() bool {
		return testutil.ToFloat64(metrics.refused[refuseMaxConns]) == 2
	})

	idle[0].nc.Close()
	waitFor(t, "the closed connection released", func() bool { return testutil.ToFloat64(metrics.openConns) == maxConns-1 })
	s := dialSwitchFrom(t, addr, "127.0.0.2", 2)
	waitFor(t, "the new switch connected", func() bool { return core.Connected() == 2 })
	checkService(t, s, 9)
	if got := testutil.ToFloat64(metrics.refused[refusePeerHandshakes]); got != 0 {
		t.Errorf("connections_refused_total{peer_handshakes} = %v, want 0", got)
	}
}

// TestServerHandshakeTimeoutCounted: connections that stop half way
// through a HELLO, or after HELLO without a FEATURES_REPLY, are closed
// after HandshakeTimeout, counted, logged as such, and no longer hold a
// handshaking slot of their peer.
func TestServerHandshakeTimeoutCounted(t *testing.T) {
	logs := newLogRecorder()
	addr, _, metrics := startServer(t, NewReactive(ReactiveConfig{}), ServerConfig{
		// Short, so the test is quick; the close is awaited, not timed.
		// Not shorter: the good switches at the end must finish their
		// handshake within it on a busy machine.
		HandshakeTimeout: time.Second, MaxHandshakesPerPeer: 2, EchoInterval: -1,
		Logger: slog.New(logs),
	})
	partial := dialRawFrom(t, addr, "127.0.0.1")
	partial.sendRaw(header(1, openflow.TypeHello, 8, 1)[:5])
	noFeatures := dialRawFrom(t, addr, "127.0.0.1")
	noFeatures.send(&openflow.Hello{Header: openflow.Header{Xid: 1}})
	noFeatures.expect(openflow.TypeFeaturesRequest)

	// Generous bounds: 1 s plus a busy machine.
	partial.expectClosed(10 * time.Second)
	noFeatures.expectClosed(10 * time.Second)
	waitFor(t, "both timeouts counted", func() bool { return testutil.ToFloat64(metrics.handshakeTimeouts) == 2 })
	waitFor(t, "no connection left", func() bool {
		return testutil.ToFloat64(metrics.handshakingConns) == 0 && testutil.ToFloat64(metrics.openConns) == 0
	})
	waitFor(t, "the timeout logged", func() bool { return logs.count("not completed within 1s") == 2 })

	// The peer's slots are free again.
	dialSwitchFrom(t, addr, "127.0.0.1", 1)
	dialSwitchFrom(t, addr, "127.0.0.1", 2)
	if got := testutil.ToFloat64(metrics.refused[refusePeerHandshakes]); got != 0 {
		t.Errorf("connections_refused_total{peer_handshakes} = %v, want 0", got)
	}
}

// logRecorder is a slog.Handler keeping every record as one line of text
// (message and attributes), for tests to search.
type logRecorder struct {
	store *logStore
	attrs []slog.Attr // from WithAttrs
}

type logStore struct {
	mu    sync.Mutex
	lines []string
}

func newLogRecorder() *logRecorder { return &logRecorder{store: &logStore{}} }

func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	var b strings.Builder
	b.WriteString(rec.Message)
	for _, a := range r.attrs {
		b.WriteString(" " + a.String())
	}
	rec.Attrs(func(a slog.Attr) bool {
		b.WriteString(" " + a.String())
		return true
	})
	r.store.mu.Lock()
	defer r.store.mu.Unlock()
	r.store.lines = append(r.store.lines, b.String())
	return nil
}

func (r *logRecorder) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &logRecorder{store: r.store, attrs: append(append([]slog.Attr(nil), r.attrs...), attrs...)}
}

func (r *logRecorder) WithGroup(string) slog.Handler { return r }

// count is how many records contain s.
func (r *logRecorder) count(s string) int {
	r.store.mu.Lock()
	defer r.store.mu.Unlock()
	n := 0
	for _, l := range r.store.lines {
		if strings.Contains(l, s) {
			n++
		}
	}
	return n
}

// dump is every record, for failure messages.
func (r *logRecorder) dump() string {
	r.store.mu.Lock()
	defer r.store.mu.Unlock()
	return strings.Join(r.store.lines, "\n")
}

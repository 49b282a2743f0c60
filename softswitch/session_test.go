package softswitch

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/openflow"
)

// rawController is a hand-driven controller on loopback: it speaks bytes,
// so it can misbehave in ways a real implementation cannot.
type rawController struct {
	t *testing.T
	l net.Listener
}

func newRawController(t *testing.T) *rawController {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return &rawController{t: t, l: l}
}

func (rc *rawController) target() string { return "tcp:" + rc.l.Addr().String() }

// accept waits for the switch and completes the HELLO exchange.
func (rc *rawController) accept() net.Conn {
	rc.t.Helper()
	_ = rc.l.(*net.TCPListener).SetDeadline(time.Now().Add(10 * time.Second))
	c, err := rc.l.Accept()
	if err != nil {
		rc.t.Fatalf("switch did not (re)connect: %v", err)
	}
	rc.t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	hello := readMsg(rc.t, c)
	if hello[1] != byte(openflow.TypeHello) {
		rc.t.Fatalf("first message type %d, want HELLO", hello[1])
	}
	writeBytes(rc.t, c, []byte{1, 0, 0, 8, 0, 0, 0, 1})
	return c
}

func readMsg(t *testing.T, c net.Conn) []byte {
	t.Helper()
	hdr := make([]byte, 8)
	if _, err := io.ReadFull(c, hdr); err != nil {
		t.Fatalf("read header: %v", err)
	}
	n := int(binary.BigEndian.Uint16(hdr[2:]))
	msg := make([]byte, n)
	copy(msg, hdr)
	if _, err := io.ReadFull(c, msg[8:]); err != nil {
		t.Fatalf("read body: %v", err)
	}
	return msg
}

// readUntil skips asynchronous messages (PORT_STATUS, ECHO_REQUEST, ...)
// until one of type typ arrives.
func readUntil(t *testing.T, c net.Conn, typ openflow.Type) openflow.Message {
	t.Helper()
	for {
		b := readMsg(t, c)
		if openflow.Type(b[1]) != typ {
			continue
		}
		m, err := openflow.Unmarshal(b)
		if err != nil {
			t.Fatalf("switch sent undecodable %v: %v", typ, err)
		}
		return m
	}
}

func writeBytes(t *testing.T, c net.Conn, b []byte) {
	t.Helper()
	if _, err := c.Write(b); err != nil {
		t.Fatalf("write: %v", err)
	}
}

func msgBytes(t *testing.T, m openflow.Message) []byte {
	b, err := openflow.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func startSession(t *testing.T, cfg SessionConfig, nports int) (*Switch, *Session) {
	t.Helper()
	sw := New(clock.Wall{}, Config{DatapathID: 0x77})
	for i := 1; i <= nports; i++ {
		if err := sw.AddPort(NewMemPort(uint16(i), "p", MemPortMAC(0x77, uint16(i)), nil)); err != nil {
			t.Fatal(err)
		}
	}
	cfg.MinBackoff, cfg.MaxBackoff = 10*time.Millisecond, 50*time.Millisecond
	return sw, runSession(t, sw, cfg)
}

// runSession starts a session of sw and stops it (and closes sw) when the
// test ends.
func runSession(t *testing.T, sw *Switch, cfg SessionConfig) *Session {
	t.Helper()
	sess, err := NewSession(sw, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = sess.Run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second): // generous: a busy machine
			t.Error("session did not stop")
		}
		sw.Close()
	})
	return sess
}

func TestHostileControllerNeverKillsTheSwitch(t *testing.T) {
	rc := newRawController(t)
	_, sess := startSession(t, SessionConfig{Controller: rc.target()}, 2)
	features := msgBytes(t, &openflow.FeaturesRequest{Header: openflow.Header{Xid: 1}})

	cases := []struct {
		name string
		// send misbehaves on an established connection.
		send func(c net.Conn)
		// wantErr is the ERROR the switch must answer with (type, code),
		// or nil when it must just close the connection.
		wantErr *[2]uint16
		// closes: the connection ends (the switch then redials).
		closes bool
	}{
		{"unknown type", func(c net.Conn) { writeBytes(t, c, []byte{1, 99, 0, 8, 0, 0, 0, 5}) },
			&[2]uint16{uint16(openflow.ErrorTypeBadRequest), uint16(openflow.BadRequestBadType)}, false},
		{"wrong version", func(c net.Conn) { writeBytes(t, c, []byte{4, 5, 0, 8, 0, 0, 0, 6}) },
			&[2]uint16{uint16(openflow.ErrorTypeBadRequest), uint16(openflow.BadRequestBadVersion)}, false},
		{"oversized request body", func(c net.Conn) {
			b := make([]byte, 65535)
			copy(b, []byte{1, byte(openflow.TypeFeaturesRequest), 0xff, 0xff, 0, 0, 0, 7})
			writeBytes(t, c, b)
		}, &[2]uint16{uint16(openflow.ErrorTypeBadRequest), uint16(openflow.BadRequestBadLen)}, false},
		{"bad action length", func(c net.Conn) {
			b := msgBytes(t, flowMod(openflow.FlowModAdd, openflow.MatchAll(), 1, output(1)))
			binary.BigEndian.PutUint16(b[72+2:], 12) // action says 12 bytes
			writeBytes(t, c, b)
		}, &[2]uint16{uint16(openflow.ErrorTypeBadAction), uint16(openflow.BadActionBadLen)}, false},
		{"garbage header", func(c net.Conn) { writeBytes(t, c, []byte{0xde, 0xad, 0, 3, 0xbe, 0xef, 0, 0, 1, 2, 3}) },
			&[2]uint16{uint16(openflow.ErrorTypeBadRequest), uint16(openflow.BadRequestBadLen)}, true},
		{"truncated message then close", func(c net.Conn) {
			b := msgBytes(t, flowMod(openflow.FlowModAdd, openflow.MatchAll(), 1, output(1)))
			writeBytes(t, c, b[:30])
			c.(*net.TCPConn).CloseWrite()
		}, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conn := rc.accept()
			c.send(conn)
			if c.wantErr != nil {
				e := readUntil(t, conn, openflow.TypeError).(*openflow.ErrorMsg)
				if uint16(e.Type) != c.wantErr[0] || e.Code != c.wantErr[1] {
					t.Fatalf("error %v/%s", e.Type, openflow.CodeString(e.Type, e.Code))
				}
			}
			if c.closes {
				// The switch hangs up: reading ends with EOF (after any
				// messages still in flight).
				_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
				if _, err := io.ReadAll(conn); err != nil {
					t.Fatalf("switch did not close cleanly: %v", err)
				}
			} else {
				// The connection is still usable.
				writeBytes(t, conn, features)
				if fr := readUntil(t, conn, openflow.TypeFeaturesReply).(*openflow.FeaturesReply); fr.DatapathID != 0x77 {
					t.Fatalf("features %+v", fr)
				}
			}
			conn.Close()
		})
	}
	// After everything, the switch still (re)connects and answers.
	conn := rc.accept()
	writeBytes(t, conn, features)
	readUntil(t, conn, openflow.TypeFeaturesReply)
	if sess.ControllerConnects() < uint64(len(cases)+1) {
		t.Fatalf("%d connects", sess.ControllerConnects())
	}
}

func TestControllerSilentHandshakeIsRetried(t *testing.T) {
	rc := newRawController(t)
	startSession(t, SessionConfig{Controller: rc.target(), Conn: openflow.ConnConfig{HandshakeTimeout: 200 * time.Millisecond}}, 1)
	// First connection: never answer HELLO.
	_ = rc.l.(*net.TCPListener).SetDeadline(time.Now().Add(5 * time.Second))
	c1, err := rc.l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	// The switch gives up on it and dials again.
	c2 := rc.accept()
	writeBytes(t, c2, msgBytes(t, &openflow.EchoRequest{Header: openflow.Header{Xid: 9}}))
	if e := readUntil(t, c2, openflow.TypeEchoReply); e.GetXid() != 9 {
		t.Fatal("echo xid")
	}
}

func TestPassiveListenerServesManagementClients(t *testing.T) {
	rc := newRawController(t)
	sw, sess := startSession(t, SessionConfig{Controller: rc.target(), Listen: []string{"ptcp:0:127.0.0.1"}}, 2)
	ctl := rc.accept()
	addr := sess.ListenAddrs()[0].String()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	mc := openflow.NewConn(nc, openflow.ConnConfig{})
	defer mc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := mc.Handshake(ctx); err != nil {
		t.Fatal(err)
	}
	rep, err := mc.Request(ctx, &openflow.FeaturesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if fr := rep.(*openflow.FeaturesReply); fr.DatapathID != 0x77 || len(fr.Ports) != 2 {
		t.Fatalf("features %+v", fr)
	}
	// A FLOW_MOD from the management client changes the shared table, and
	// the barrier orders it.
	if err := mc.Send(flowMod(openflow.FlowModAdd, matchInPort(1), 5, output(2))); err != nil {
		t.Fatal(err)
	}
	if err := mc.Barrier(ctx); err != nil {
		t.Fatal(err)
	}
	parts, err := mc.RequestMulti(ctx, statsReq(0, openflow.FlowStatsRequest{Match: openflow.MatchAll(), TableID: 0xff, OutPort: openflow.PortNone}))
	if err != nil {
		t.Fatal(err)
	}
	if fs := parts[0].(*openflow.StatsReply).Body.(openflow.FlowStatsReply); len(fs) != 1 || fs[0].Priority != 5 {
		t.Fatalf("flow stats %+v", fs)
	}
	// A miss goes to the controller, not to the management client. The
	// switch finishes its controller handshake on its own goroutine after
	// accept() returned; in fail-secure mode a miss before that is dropped.
	waitFor(t, 5*time.Second, "controller session", sess.ControllerConnected)
	sw.Receive(2, udpFrame(t, 1, 2))
	if pi := readUntil(t, ctl, openflow.TypePacketIn).(*openflow.PacketIn); pi.InPort != 2 {
		t.Fatalf("packet-in %+v", pi)
	}
}

func TestRandomGarbageStreamThenReconnect(t *testing.T) {
	rc := newRawController(t)
	startSession(t, SessionConfig{Controller: rc.target()}, 1)
	for seed := range 5 {
		conn := rc.accept()
		// A deterministic pseudo-random stream (xorshift) of 64 KiB.
		x := uint64(seed*7919 + 1)
		buf := make([]byte, 64<<10)
		for i := range buf {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			buf[i] = byte(x)
		}
		buf[0] = 1 // looks like OpenFlow 1.0 for a moment
		_, _ = conn.Write(buf)
		conn.Close()
	}
	conn := rc.accept()
	writeBytes(t, conn, msgBytes(t, &openflow.FeaturesRequest{Header: openflow.Header{Xid: 3}}))
	readUntil(t, conn, openflow.TypeFeaturesReply)
}

func TestReconnectBackoffDoublesAndIsCapped(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	sw := New(clock.Wall{}, Config{})
	sess, err := NewSession(sw, SessionConfig{Controller: "tcp:" + l.Addr().String(),
		MinBackoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go sess.Run(ctx)
	// Accept and hang up at once: every handshake fails, so the waits are
	// 50, 100, 200, 200, 200, 200 ms (uncapped they would reach 1.6 s).
	var times []time.Time
	for range 7 {
		c, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		times = append(times, time.Now())
		c.Close()
	}
	want := []time.Duration{50, 100, 200, 200, 200, 200}
	for i := 1; i < len(times); i++ {
		if gap, w := times[i].Sub(times[i-1]), want[i-1]*time.Millisecond; gap < w {
			t.Errorf("gap %d: %v, shorter than the backoff %v", i, gap, w)
		}
	}
	// Generous slack for a loaded machine, still far below the uncapped
	// 1.6 s.
	if last := times[6].Sub(times[5]); last > time.Second {
		t.Errorf("last gap %v: backoff not capped at 200ms", last)
	}
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(timeout); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%s: not ready after %v", what, timeout)
		}
	}
}

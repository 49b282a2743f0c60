package softswitch

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/openflow"
)

// mgmtSwitch is a switch on the wall clock with a passive listener and two
// in-memory ports; port 2's frames arrive on the returned channel.
func mgmtSwitch(t *testing.T, cfg SessionConfig) (*Switch, *Session, string, chan []byte) {
	t.Helper()
	return mgmtSwitchWith(t, Config{}, cfg)
}

// mgmtSwitchWith is mgmtSwitch with a core configuration (metrics, log).
func mgmtSwitchWith(t *testing.T, swCfg Config, cfg SessionConfig) (*Switch, *Session, string, chan []byte) {
	t.Helper()
	swCfg.DatapathID = 0x77
	sw := New(clock.Wall{}, swCfg)
	out := make(chan []byte, 16)
	deliver := func(f []byte) {
		select {
		case out <- append([]byte(nil), f...):
		default:
		}
	}
	for i := uint16(1); i <= 2; i++ {
		var d func([]byte)
		if i == 2 {
			d = deliver
		}
		if err := sw.AddPort(NewMemPort(i, "p", MemPortMAC(0x77, i), d)); err != nil {
			t.Fatal(err)
		}
	}
	if len(cfg.Listen) == 0 {
		cfg.Listen = []string{"ptcp:0:127.0.0.1"}
	}
	sess := runSession(t, sw, cfg)
	return sw, sess, sess.ListenAddrs()[0].String(), out
}

// rawClient dials addr (from the local address local, "" for any), shrinks
// its receive buffer and completes the HELLO exchange by hand.
func rawClient(t *testing.T, addr, local string) *net.TCPConn {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second}
	if local != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(local)}
	}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	c := nc.(*net.TCPConn)
	_ = c.SetReadBuffer(4096)
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	writeBytes(t, c, []byte{1, byte(openflow.TypeHello), 0, 8, 0, 0, 0, 1})
	if h := readMsg(t, c); h[1] != byte(openflow.TypeHello) {
		t.Fatalf("first message type %d, want HELLO", h[1])
	}
	_ = c.SetDeadline(time.Time{})
	return c
}

// flood writes n copies of msg on c from a goroutine and never reads. It
// returns once the switch stopped taking them (no progress for 300 ms) or
// all were written; the count written so far is returned too.
func flood(t *testing.T, c net.Conn, msg []byte, n int) *atomic.Int64 {
	t.Helper()
	var written atomic.Int64
	go func() {
		const chunk = 256
		buf := make([]byte, 0, chunk*len(msg))
		for i := 0; i < chunk; i++ {
			buf = append(buf, msg...)
		}
		for sent := 0; sent < n; sent += chunk {
			k := min(chunk, n-sent)
			if _, err := c.Write(buf[:k*len(msg)]); err != nil {
				return
			}
			written.Add(int64(k))
		}
	}()
	last, since := int64(-1), time.Now()
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		w := written.Load()
		if w == int64(n) {
			break
		}
		if w != last {
			last, since = w, time.Now()
		} else if time.Since(since) > 300*time.Millisecond {
			break
		}
	}
	return &written
}

// readFrame reads one OpenFlow message from c.
func readFrame(c net.Conn) ([]byte, error) {
	hdr := make([]byte, 8)
	if _, err := io.ReadFull(c, hdr); err != nil {
		return nil, err
	}
	msg := make([]byte, binary.BigEndian.Uint16(hdr[2:]))
	if len(msg) < 8 {
		return nil, fmt.Errorf("header length %d", len(msg))
	}
	copy(msg, hdr)
	_, err := io.ReadFull(c, msg[8:])
	return msg, err
}

// probeClient is a well-behaved management client.
func probeClient(t *testing.T, addr string) *openflow.Conn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c := openflow.NewConn(nc, openflow.ConnConfig{})
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Handshake(ctx); err != nil {
		t.Fatalf("handshake: %v", err)
	}
	return c
}

// A management client that floods requests and never reads costs only
// itself: another management client is answered at once, and the data
// path forwards, both far within the 30 s write timeout the flood used to
// stall everything for.
func TestNonReadingClientDoesNotFreezeTheSwitch(t *testing.T) {
	reg := prometheus.NewRegistry()
	met, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	sw, _, addr, out := mgmtSwitchWith(t, Config{Metrics: met}, SessionConfig{})
	hog := rawClient(t, addr, "")
	desc := msgBytes(t, statsReq(5, openflow.DescStatsRequest{}))
	written := flood(t, hog, desc, 1000000)
	t.Logf("hog wrote %d DESC requests before the switch stopped reading", written.Load())

	// One deadline for all three: each used to wait about the old 5 s
	// reply timeout, and the whole switch up to the 30 s write timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	began := time.Now()
	step := func(what string, f func() error) {
		t.Helper()
		if err := f(); err != nil {
			t.Fatalf("%s: %v after %v", what, err, time.Since(began))
		}
		t.Logf("%s done after %v", what, time.Since(began))
	}
	mc := probeClient(t, addr)
	step("DESC stats from a second client", func() error {
		_, err := mc.RequestMulti(ctx, statsReq(0, openflow.DescStatsRequest{}))
		return err
	})
	step("FLOW_MOD and BARRIER", func() error {
		if err := mc.Send(flowMod(openflow.FlowModAdd, matchInPort(1), 5, output(2))); err != nil {
			return err
		}
		return mc.Barrier(ctx)
	})
	step("a frame forwarded from port 1 to port 2", func() error {
		sw.Receive(1, udpFrame(t, 1, 2))
		select {
		case <-out:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	// The hog was held back, not dropped from: no reply was refused.
	if n := counterSum(t, reg, "pseudocong_switch_channel_messages_dropped_total", nil); n != 0 {
		t.Fatalf("%v messages dropped", n)
	}
}

// counterSum adds up the samples of metric name whose labels include want.
func counterSum(t *testing.T, reg *prometheus.Registry, name string, want map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			have := map[string]string{}
			for _, lp := range m.GetLabel() {
				have[lp.GetName()] = lp.GetValue()
			}
			for k, v := range want {
				if have[k] != v {
					continue next
				}
			}
			if c := m.GetCounter(); c != nil {
				sum += c.GetValue()
			} else if g := m.GetGauge(); g != nil {
				sum += g.GetValue()
			}
		}
	}
	return sum
}

// A multipart reply far larger than the reply backlog and the write queue
// still reaches the client whole: replies are never refused, the backlog
// only holds back the client's next request.
func TestLargeFlowDumpDeliveredWhole(t *testing.T) {
	_, _, addr, _ := mgmtSwitch(t, SessionConfig{Conn: openflow.ConnConfig{ReplyBacklog: 4096, WriteQueueBytes: 16 << 10, WriteQueue: 16}})
	mc := probeClient(t, addr)
	const n = 3000
	for i := range n {
		m := openflow.Match{Wildcards: openflow.WildcardAll &^ openflow.WildcardTpSrc &^ openflow.WildcardNwProto &^ openflow.WildcardDlType,
			DlType: 0x0800, NwProto: 17, TpSrc: uint16(i + 1)}
		if err := mc.Send(flowMod(openflow.FlowModAdd, m, 10, output(2))); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := mc.Barrier(ctx); err != nil {
		t.Fatal(err)
	}
	for range 3 { // and again: the backlog drains between requests
		parts, err := mc.RequestMulti(ctx, statsReq(0, openflow.FlowStatsRequest{Match: openflow.MatchAll(), TableID: 0xff, OutPort: openflow.PortNone}))
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for _, p := range parts {
			got += len(p.(*openflow.StatsReply).Body.(openflow.FlowStatsReply))
		}
		if got != n || len(parts) < 2 {
			t.Fatalf("%d flows in %d parts, want %d", got, len(parts), n)
		}
	}
}

// ECHO_REQUESTs flooded by a client that reads only later: every request
// gets its reply or is counted as dropped (the switch used to drop the
// replies beyond its write queue silently: 5 000 requests, 4 096 replies).
func TestEchoFloodRepliesPlusCountedDrops(t *testing.T) {
	reg := prometheus.NewRegistry()
	met, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	_, _, addr, _ := mgmtSwitchWith(t, Config{Metrics: met}, SessionConfig{})
	c := rawClient(t, addr, "")
	const n = 5000
	var buf []byte
	for i := 1; i <= n; i++ {
		buf = append(buf, msgBytes(t, &openflow.EchoRequest{Header: openflow.Header{Xid: uint32(i)}})...)
	}
	writeBytes(t, c, buf)
	time.Sleep(200 * time.Millisecond) // not reading meanwhile
	replies := 0
	for replies < n {
		// Read until the switch has nothing more to say for a second.
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		b, err := readFrame(c)
		if err != nil {
			break
		}
		if openflow.Type(b[1]) == openflow.TypeEchoReply {
			replies++
		}
	}
	dropped := func() int {
		return int(counterSum(t, reg, "pseudocong_switch_channel_messages_dropped_total", map[string]string{"type": "ECHO_REPLY"}))
	}
	if replies+dropped() != n {
		t.Fatalf("%d replies + %d counted drops != %d requests", replies, dropped(), n)
	}
	t.Logf("%d replies, %d dropped", replies, dropped())
}

// Malformed messages from a management client are answered at once, on
// their own and two in one segment, also while another client floods.
func TestMalformedMessagesAnsweredPromptly(t *testing.T) {
	_, _, addr, _ := mgmtSwitch(t, SessionConfig{})
	hog := rawClient(t, addr, "")
	flood(t, hog, msgBytes(t, statsReq(5, openflow.DescStatsRequest{})), 1000000)

	c := rawClient(t, addr, "")
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	badAction := msgBytes(t, flowMod(openflow.FlowModAdd, openflow.MatchAll(), 1, output(1)))
	binary.BigEndian.PutUint16(badAction[72:], 32) // action type 32
	binary.BigEndian.PutUint32(badAction[4:], 21)
	type30 := []byte{1, 30, 0, 8, 0, 0, 0, 22}
	expect := func(xid uint32, typ openflow.ErrorType, code uint16) {
		t.Helper()
		e := readUntil(t, c, openflow.TypeError).(*openflow.ErrorMsg)
		if e.Xid != xid || e.Type != typ || e.Code != code {
			t.Fatalf("ERROR xid %d %v/%s, want xid %d %v/%s", e.Xid, e.Type, openflow.CodeString(e.Type, e.Code),
				xid, typ, openflow.CodeString(typ, code))
		}
	}
	writeBytes(t, c, type30)
	expect(22, openflow.ErrorTypeBadRequest, uint16(openflow.BadRequestBadType))
	writeBytes(t, c, badAction)
	expect(21, openflow.ErrorTypeBadAction, uint16(openflow.BadActionBadType))
	writeBytes(t, c, append(append([]byte(nil), badAction...), type30...))
	expect(21, openflow.ErrorTypeBadAction, uint16(openflow.BadActionBadType))
	expect(22, openflow.ErrorTypeBadRequest, uint16(openflow.BadRequestBadType))
}

// A controller that stops reading loses PACKET_INs, counted, and nothing
// else waits for it: the misses keep coming in and a management client is
// answered.
func TestNonReadingControllerLosesOnlyAsyncMessages(t *testing.T) {
	reg := prometheus.NewRegistry()
	met, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	rc := newRawController(t)
	sw, sess, addr, _ := mgmtSwitchWith(t, Config{Metrics: met}, SessionConfig{Controller: rc.target(),
		Conn: openflow.ConnConfig{WriteQueue: 64}})
	ctl := rc.accept()
	_ = ctl.(*net.TCPConn).SetReadBuffer(4096)
	waitFor(t, 5*time.Second, "controller session", sess.ControllerConnected)
	frame := udpFrame(t, 1, 2)
	dropped := func() float64 {
		return counterSum(t, reg, "pseudocong_switch_channel_messages_dropped_total",
			map[string]string{"role": "controller", "type": "PACKET_IN", "reason": "queue_full"})
	}
	// Misses (a PACKET_IN each) until the kernel's buffers and the write
	// queue are full and PACKET_INs are dropped.
	misses := 0
	for dropped() == 0 {
		if misses >= 1000000 {
			t.Fatalf("no PACKET_IN counted as dropped after %d misses", misses)
		}
		for range 10000 {
			sw.Receive(1, frame)
		}
		misses += 10000
	}
	mc := probeClient(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := mc.Request(ctx, &openflow.FeaturesRequest{}); err != nil {
		t.Fatalf("management client: %v", err)
	}
	t.Logf("%v of %d PACKET_INs dropped", dropped(), misses)
}

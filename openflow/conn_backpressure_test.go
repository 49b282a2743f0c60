package openflow

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// tcpConnWithRawPeer is connWithRawPeer over loopback TCP, where a read
// returns whatever the kernel has (the transport of the real switch).
func tcpConnWithRawPeer(t *testing.T, cfg ConnConfig) (*Conn, *rawPeer) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		nc, _ := l.Accept()
		accepted <- nc
	}()
	pc, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	nc := <-accepted
	if nc == nil {
		t.Fatal("accept failed")
	}
	c := NewConn(nc, cfg)
	p := newRawPeer(t, pc)
	errc := make(chan error, 1)
	go func() { errc <- c.Handshake(context.Background()) }()
	p.write(helloWith(1))
	if err := <-errc; err != nil {
		t.Fatalf("handshake: %v", err)
	}
	if h := p.next(); Type(h[1]) != TypeHello {
		t.Fatalf("first frame %x is not a HELLO", h)
	}
	t.Cleanup(func() { c.Close() })
	return c, p
}

// badActionFlowMod is a FLOW_MOD whose one action has type 32.
func badActionFlowMod(t *testing.T, xid uint32) []byte {
	t.Helper()
	fm := &FlowMod{Header: Header{Xid: xid}, Match: Match{Wildcards: WildcardAll}, Command: FlowModAdd,
		BufferID: NoBuffer, OutPort: PortNone, Actions: []Action{ActionOutput{Port: 1}}}
	b, err := fm.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	binary.BigEndian.PutUint16(b[72:], 32)
	return b
}

// A malformed message is answered at once, on its own: the reader handles
// every complete message it has buffered, and the writer flushes the
// answers, before it waits for more bytes. Two malformed messages in one
// segment both get their ERROR.
func TestMalformedMessageAnsweredWithoutAFollowingOne(t *testing.T) {
	for _, tc := range []struct {
		name    string
		backlog int
		dial    func(*testing.T, ConnConfig) (*Conn, *rawPeer)
	}{
		{"pipe", 0, connWithRawPeer},
		{"tcp", 0, tcpConnWithRawPeer},
		{"tcp reply backlog", 1 << 20, tcpConnWithRawPeer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := quietConfig()
			cfg.ReplyBacklog = tc.backlog
			_, p := tc.dial(t, cfg)
			expect := func(xid uint32, et ErrorType, code uint16) {
				t.Helper()
				if e := p.expectError(et, code); e.Xid != xid {
					t.Fatalf("ERROR xid %d, want %d", e.Xid, xid)
				}
			}
			// One message of type 30, and nothing after it.
			p.write(rawMsg(Type(30), 11, nil))
			expect(11, ErrorTypeBadRequest, uint16(BadRequestBadType))
			// Alone too: a FLOW_MOD with action type 32.
			p.write(badActionFlowMod(t, 12))
			expect(12, ErrorTypeBadAction, uint16(BadActionBadType))
			// Both in one write.
			p.write(append(badActionFlowMod(t, 13), rawMsg(Type(30), 14, nil)...))
			expect(13, ErrorTypeBadAction, uint16(BadActionBadType))
			expect(14, ErrorTypeBadRequest, uint16(BadRequestBadType))
		})
	}
}

// pipeConnUnread returns a Conn that completed its handshake over
// net.Pipe (synchronous: nothing is buffered in a kernel) and the peer's
// end, which nobody reads until startReading.
func pipeConnUnread(t *testing.T, cfg ConnConfig) (*Conn, *rawPeer) {
	t.Helper()
	a, b := net.Pipe()
	c := NewConn(a, cfg)
	errc := make(chan error, 1)
	go func() { errc <- c.Handshake(context.Background()) }()
	if _, err := b.Write(helloWith(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Read(make([]byte, HeaderLen)); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); b.Close() })
	return c, &rawPeer{t: t, nc: b}
}

// startReading makes p collect the frames sent to it from now on.
func (p *rawPeer) startReading() {
	p.frames = make(chan []byte, 1<<16)
	go func() {
		fr := newFrameReader(p.nc, 0)
		for {
			f, err := fr.next()
			if err != nil {
				p.mu.Lock()
				p.err = err
				p.mu.Unlock()
				close(p.frames)
				return
			}
			p.frames <- f
		}
	}()
}

// echoFlood writes n ECHO_REQUESTs (xid 1..n) from a goroutine.
func echoFlood(p *rawPeer, n int) <-chan error {
	done := make(chan error, 1)
	go func() {
		var buf []byte
		for i := 1; i <= n; i++ {
			buf = append(buf, rawMsg(TypeEchoRequest, uint32(i), nil)...)
		}
		_, err := p.nc.Write(buf)
		done <- err
	}()
	return done
}

// A peer that floods ECHO_REQUESTs and does not read hits its own reply
// backlog: the reader stops reading it, nothing is dropped, and once it
// reads every request gets its reply. The pause is not idleness.
func TestEchoFloodPausesReaderUnderReplyBacklog(t *testing.T) {
	const n = 5000
	cfg := quietConfig()
	cfg.ReplyBacklog = 4096
	cfg.IdleTimeout = 100 * time.Millisecond
	var hookDrops atomic.Int64
	cfg.OnControlDrop = func(Type, error) { hookDrops.Add(1) }
	c, p := pipeConnUnread(t, cfg)
	flooded := echoFlood(p, n)

	// The reader pauses once 4 KiB of replies (512 echoes) are unread.
	waitUntil(t, 5*time.Second, "reader paused", func() bool { return c.Stats().ReplyBacklogPauses > 0 })
	time.Sleep(3 * cfg.IdleTimeout) // paused longer than the idle timeout
	if in := c.Stats().MessagesIn; in > 2000 {
		t.Fatalf("reader took %d messages from a peer that does not read", in)
	}
	if err := c.Err(); err != nil {
		t.Fatalf("connection ended while paused: %v", err)
	}

	// The peer reads: every request is answered, in order.
	p.startReading()
	for i := 1; i <= n; i++ {
		f := p.next()
		if Type(f[1]) != TypeEchoReply || xidOf(f) != uint32(i) {
			t.Fatalf("reply %d: %x", i, f)
		}
	}
	if err := <-flooded; err != nil {
		t.Fatal(err)
	}
	if d := c.Stats().ControlDropped; d != 0 || hookDrops.Load() != 0 {
		t.Fatalf("%d replies dropped (hook %d)", d, hookDrops.Load())
	}
}

// Without a reply backlog the reader never stops: replies beyond the write
// queue are dropped, and every drop is counted and reported.
func TestEchoFloodDropsAreCounted(t *testing.T) {
	const n = 5000
	cfg := quietConfig()
	cfg.WriteQueue = 64
	var hookDrops atomic.Int64
	cfg.OnControlDrop = func(typ Type, err error) {
		if typ != TypeEchoReply || !errors.Is(err, ErrQueueFull) {
			t.Errorf("drop of %v: %v", typ, err)
		}
		hookDrops.Add(1)
	}
	c, p := pipeConnUnread(t, cfg)
	if err := <-echoFlood(p, n); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 10*time.Second, "all requests read", func() bool { return c.Stats().MessagesIn == n+1 }) // + HELLO
	p.startReading()
	replies := 0
	for replies+int(c.Stats().ControlDropped) < n {
		if f := p.next(); Type(f[1]) == TypeEchoReply {
			replies++
		}
	}
	if d := c.Stats().ControlDropped; replies+int(d) != n || hookDrops.Load() != int64(d) {
		t.Fatalf("%d replies + %d dropped (hook %d) != %d requests", replies, d, hookDrops.Load(), n)
	}
	t.Logf("%d replies, %d dropped", replies, c.Stats().ControlDropped)
}

// SendReply keeps the xid (even 0) and, under ReplyBacklog, is never
// refused for room, while WaitReplyRoom blocks until the peer reads.
// Without ReplyBacklog it is SendNonBlocking.
func TestSendReplyAndWaitReplyRoom(t *testing.T) {
	cfg := quietConfig()
	cfg.WriteQueue = 4
	cfg.ReplyBacklog = 1024
	c, p := pipeConnUnread(t, cfg)
	// 100 replies of 1 KiB: far beyond WriteQueue and ReplyBacklog. After
	// the first, the writer is stuck in its first write (nobody reads the
	// pipe), so the others stay queued.
	reply := func(i int) {
		t.Helper()
		if err := c.SendReply(&EchoReply{Header: Header{Xid: uint32(i)}, Data: make([]byte, 1016)}); err != nil {
			t.Fatalf("reply %d refused: %v", i, err)
		}
	}
	reply(0)
	waitUntil(t, 5*time.Second, "writer busy", func() bool {
		c.wmu.Lock()
		defer c.wmu.Unlock()
		return len(c.wbuf) == 0 // taken by the writer
	})
	for i := 1; i < 100; i++ {
		reply(i)
	}
	if err := c.SendNonBlocking(&BarrierRequest{}); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("SendNonBlocking past the limits: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if err := c.WaitReplyRoom(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitReplyRoom with 100 KiB unread: %v", err)
	}
	p.startReading()
	for i := range 100 {
		if f := p.next(); Type(f[1]) != TypeEchoReply || xidOf(f) != uint32(i) {
			t.Fatalf("reply %d: %x", i, f[:8])
		}
	}
	if err := c.WaitReplyRoom(context.Background()); err != nil {
		t.Fatalf("WaitReplyRoom after the peer read: %v", err)
	}
	c.Close()
	if err := c.SendReply(&EchoReply{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("SendReply after Close: %v", err)
	}

	off := quietConfig()
	off.WriteQueue = 1
	c2, _ := connPair(t, off, quietConfig())
	var full bool
	for range 100 {
		if err := c2.SendReply(&EchoReply{}); errors.Is(err, ErrQueueFull) {
			full = true
			break
		}
	}
	if !full {
		t.Fatal("SendReply without ReplyBacklog was never refused")
	}
}

// IdleTimeout counts whole messages: a peer trickling the bytes of a
// message that never completes is closed with ErrIdle, one that sends
// whole messages is not.
func TestIdleTimeoutCountsMessagesNotBytes(t *testing.T) {
	cfg := quietConfig()
	cfg.IdleTimeout = 300 * time.Millisecond

	began := time.Now() // the HELLO is the last whole message
	c, p := tcpConnWithRawPeer(t, cfg)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		// A header announcing 1000 bytes, then a byte every 20 ms.
		msg := rawMsg(TypeEchoRequest, 1, make([]byte, 992))
		for i := 0; i < len(msg); i++ {
			if _, err := p.nc.Write(msg[i : i+1]); err != nil {
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	if err := waitDone(t, c, 5*time.Second); !errors.Is(err, ErrIdle) {
		t.Fatalf("trickling peer: %v", err)
	}
	if d := time.Since(began); d < cfg.IdleTimeout {
		t.Fatalf("closed after %v, before the idle timeout", d)
	}

	c2, p2 := tcpConnWithRawPeer(t, cfg)
	for i := range 30 { // 1.5 s of whole messages every 50 ms
		p2.write(rawMsg(TypeEchoRequest, uint32(i), nil))
		time.Sleep(50 * time.Millisecond)
	}
	if err := c2.Err(); err != nil {
		t.Fatalf("talking peer closed: %v", err)
	}
}

func waitUntil(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(within); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%s: not within %v", what, within)
		}
	}
}

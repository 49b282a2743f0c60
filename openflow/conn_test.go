package openflow

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"
)

func TestHandshakeVersions(t *testing.T) {
	tests := []struct {
		name   string
		hello  []byte
		wantOK bool
	}{
		{"OVS hello of length 8", helloWith(1), true},
		{"1.3 header, no bitmap", helloWith(4), true},
		{"1.3 bitmap including 1.0", helloWith(4, 1, 4), true},
		{"1.3 bitmap without 1.0", helloWith(4, 4), false},
		{"version 0 peer", helloWith(0), false},
		{"first message not a HELLO", rawMsg(TypeFeaturesRequest, 5, nil), false},
		// Malformed: an element longer than the message. One behaviour in
		// both roles (the controller's: TestServerHelloNegotiation).
		{"malformed hello element", func() []byte { b := rawMsg(TypeHello, 1, []byte{0, 1, 0, 200}); b[0] = 4; return b }(), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := net.Pipe()
			c := NewConn(a, quietConfig())
			p := newRawPeer(t, b)
			errc := make(chan error, 1)
			go func() { errc <- c.Handshake(context.Background()) }()
			p.write(tc.hello)
			err := <-errc
			if h := p.next(); Type(h[1]) != TypeHello {
				t.Fatalf("first frame %x not HELLO", h)
			}
			if tc.wantOK {
				if err != nil {
					t.Fatalf("handshake failed: %v", err)
				}
				// The connection works: the peer's echo is answered.
				p.write(rawMsg(TypeEchoRequest, 77, []byte("ping")))
				if f := p.next(); Type(f[1]) != TypeEchoReply || xidOf(f) != 77 || !bytes.Equal(f[8:], []byte("ping")) {
					t.Fatalf("echo reply %x", f)
				}
				c.Close()
				return
			}
			var hf *HelloFailedError
			if !errors.As(err, &hf) {
				t.Fatalf("handshake error %v, want *HelloFailedError", err)
			}
			e := p.expectError(ErrorTypeHelloFailed, uint16(HelloFailedIncompatible))
			if len(e.Data) == 0 {
				t.Fatalf("HELLO_FAILED without an explanation")
			}
			p.expectClosed()
			if waitDone(t, c, time.Second) == nil {
				t.Fatalf("Err() nil after a failed handshake")
			}
		})
	}
}

func TestHandshakePeerRefuses(t *testing.T) {
	a, b := net.Pipe()
	c := NewConn(a, quietConfig())
	p := newRawPeer(t, b)
	errc := make(chan error, 1)
	go func() { errc <- c.Handshake(context.Background()) }()
	p.write(rawMsg(TypeError, 1, append([]byte{0, 0, 0, 0}, "no"...)))
	var hf *HelloFailedError
	if err := <-errc; !errors.As(err, &hf) {
		t.Fatalf("got %v, want *HelloFailedError", err)
	}
}

func TestHandshakeTimeout(t *testing.T) {
	a, b := net.Pipe()
	c := NewConn(a, quietConfig())
	newRawPeer(t, b) // reads our HELLO, never answers
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := c.Handshake(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want deadline exceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("handshake took %v", d)
	}
	waitDone(t, c, time.Second)
}

func TestHandshakeConnToConn(t *testing.T) {
	a, b := connPair(t, quietConfig(), quietConfig())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, c := range []*Conn{a, b} {
		if _, err := c.Echo(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSegmentation sends many messages in one write and then the same
// messages one byte per write; all arrive whole and in order.
func TestSegmentation(t *testing.T) {
	c, p := connWithRawPeer(t, quietConfig())
	var stream []byte
	const n = 200
	for i := range n {
		stream = append(stream, rawMsg(TypeVendor, uint32(i+1), append([]byte{0, 0, 0x23, 0x20}, bytes.Repeat([]byte{byte(i)}, i%50)...))...)
	}
	go func() {
		p.write(stream)
		for i := range stream {
			p.write(stream[i : i+1])
		}
	}()
	for round := range 2 {
		for i := range n {
			m, err := c.ReadMessage()
			if err != nil {
				t.Fatal(err)
			}
			v, ok := m.(*Vendor)
			if !ok || v.Xid != uint32(i+1) || len(v.Data) != i%50 || (len(v.Data) > 0 && v.Data[0] != byte(i)) {
				t.Fatalf("round %d message %d: %T %+v", round, i, m, m)
			}
		}
	}
	if s := c.Stats(); s.MessagesIn < 2*n {
		t.Fatalf("MessagesIn = %d", s.MessagesIn)
	}
}

// TestHostilePeer sends broken input after the handshake. Recoverable
// garbage gets the matching ERROR and the connection stays usable; a
// broken frame gets BAD_LEN and a close; nothing panics.
func TestHostilePeer(t *testing.T) {
	flowMod := rawMsg(TypeFlowMod, 9, make([]byte, 64))
	tests := []struct {
		name      string
		cfg       func(*ConnConfig)
		send      []byte
		wantType  ErrorType
		wantCode  uint16
		wantXid   uint32
		survives  bool
		wantClose func(error) bool
	}{
		{name: "unknown type", send: rawMsg(Type(0xc8), 3, nil), wantType: ErrorTypeBadRequest,
			wantCode: uint16(BadRequestBadType), wantXid: 3, survives: true},
		{name: "version 4 message", send: func() []byte { b := rawMsg(TypeFeaturesRequest, 4, nil); b[0] = 4; return b }(),
			wantType: ErrorTypeBadRequest, wantCode: uint16(BadRequestBadVersion), wantXid: 4, survives: true},
		{name: "body too short for type", send: rawMsg(TypeFlowMod, 5, make([]byte, 10)), wantType: ErrorTypeBadRequest,
			wantCode: uint16(BadRequestBadLen), wantXid: 5, survives: true},
		{name: "features request with body", send: rawMsg(TypeFeaturesRequest, 6, make([]byte, 4)), wantType: ErrorTypeBadRequest,
			wantCode: uint16(BadRequestBadLen), wantXid: 6, survives: true},
		{name: "bad action length", send: append(flowMod, 0, 0, 0, 3, 0, 0, 0, 0)[:0:0], survives: true}, // filled below
		{name: "over MaxMessageLen", cfg: func(c *ConnConfig) { c.MaxMessageLen = 512 },
			send: rawMsg(TypePacketOut, 8, make([]byte, 2000)), wantType: ErrorTypeBadRequest,
			wantCode: uint16(BadRequestBadLen), wantXid: 8, survives: true},
		{name: "header length 3", send: withLen(rawMsg(TypeHello, 10, nil), 3), wantType: ErrorTypeBadRequest,
			wantCode: uint16(BadRequestBadLen), wantXid: 10,
			wantClose: func(err error) bool { var fe *FramingError; return errors.As(err, &fe) }},
	}
	// A FLOW_MOD whose single action claims length 3.
	bad := rawMsg(TypeFlowMod, 11, append(make([]byte, 64), 0, 0, 0, 3, 0, 0, 0, 0))
	tests[4] = struct {
		name      string
		cfg       func(*ConnConfig)
		send      []byte
		wantType  ErrorType
		wantCode  uint16
		wantXid   uint32
		survives  bool
		wantClose func(error) bool
	}{name: "bad action length", send: bad, wantType: ErrorTypeBadAction, wantCode: uint16(BadActionBadLen), wantXid: 11, survives: true}

	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := quietConfig()
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			c, p := connWithRawPeer(t, cfg)
			p.write(tc.send)
			e := p.expectError(tc.wantType, tc.wantCode)
			if e.Xid != tc.wantXid {
				t.Fatalf("ERROR xid %d, want %d", e.Xid, tc.wantXid)
			}
			if want := tc.send[:min(64, len(tc.send))]; !bytes.Equal(e.Data, want) {
				t.Fatalf("ERROR data %x, want the offending message's start %x", e.Data, want)
			}
			if tc.survives {
				p.write(rawMsg(TypeBarrierRequest, 12, nil))
				m, err := c.ReadMessage()
				if err != nil || m.MsgType() != TypeBarrierRequest || m.GetXid() != 12 {
					t.Fatalf("after bad message: %v %v", m, err)
				}
				if s := c.Stats(); s.DecodeErrors != 1 {
					t.Fatalf("DecodeErrors = %d", s.DecodeErrors)
				}
				return
			}
			p.expectClosed()
			if err := waitDone(t, c, 2*time.Second); !tc.wantClose(err) {
				t.Fatalf("closed with %v", err)
			}
		})
	}
}

// TestHostileStreamEnds covers peers that vanish mid-message: the Conn
// closes cleanly with an error that says so.
func TestHostileStreamEnds(t *testing.T) {
	tests := []struct {
		name string
		send []byte
		want error
	}{
		{"clean close", nil, io.EOF},
		{"partial header", []byte{1, 10, 0}, io.ErrUnexpectedEOF},
		{"huge length, short body", withLen(rawMsg(TypePacketIn, 1, make([]byte, 100)), 0xffff), io.ErrUnexpectedEOF},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, p := connWithRawPeer(t, quietConfig())
			if len(tc.send) > 0 {
				p.write(tc.send)
			}
			p.nc.Close()
			if err := waitDone(t, c, 2*time.Second); !errors.Is(err, tc.want) {
				t.Fatalf("Err() = %v, want %v", err, tc.want)
			}
			if _, err := c.ReadMessage(); !errors.Is(err, tc.want) {
				t.Fatalf("ReadMessage after close: %v", err)
			}
		})
	}
}

// TestGarbageNeverPanics throws random streams at a Conn over loopback
// TCP. The Conn must answer or close, never panic or hang.
func TestGarbageNeverPanics(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		junk := make([]byte, rng.IntN(3000))
		for j := range junk {
			junk[j] = byte(rng.UintN(256))
		}
		if i%2 == 0 && len(junk) >= 8 {
			junk[0] = Version // get past the version check more often
			binary.BigEndian.PutUint16(junk[2:4], uint16(8+rng.IntN(len(junk))))
		}
		c, p := connWithRawPeer(t, quietConfig())
		go func() {
			for range p.frames { // drain whatever the Conn answers
			}
		}()
		go func() {
			_, _ = p.nc.Write(junk)
			p.nc.Close()
		}()
		waitDone(t, c, 2*time.Second)
		for { // buffered messages, then the error
			if _, err := c.ReadMessage(); err != nil {
				break
			}
		}
	}
}

func TestEchoAnsweredAutomatically(t *testing.T) {
	c, p := connWithRawPeer(t, quietConfig())
	data := bytes.Repeat([]byte("x"), 1000)
	p.write(rawMsg(TypeEchoRequest, 0xdeadbeef, data))
	f := p.next()
	if Type(f[1]) != TypeEchoReply || xidOf(f) != 0xdeadbeef || !bytes.Equal(f[8:], data) {
		t.Fatalf("bad echo reply %x", f[:16])
	}
	// A reply keeps the request's xid even when it is 0 (ovs-ofctl probe
	// sends xid 0 and rejects any other), and so does an ERROR.
	p.write(rawMsg(TypeEchoRequest, 0, nil))
	if f := p.next(); Type(f[1]) != TypeEchoReply || xidOf(f) != 0 {
		t.Fatalf("echo reply to xid 0: %x", f)
	}
	p.write(rawMsg(Type(99), 0, nil))
	if e := p.expectError(ErrorTypeBadRequest, uint16(BadRequestBadType)); e.Xid != 0 {
		t.Fatalf("ERROR for xid 0 has xid %d", e.Xid)
	}
	// An echo is not an application message.
	p.write(rawMsg(TypeBarrierRequest, 1, nil))
	if m, _ := c.ReadMessage(); m.MsgType() != TypeBarrierRequest {
		t.Fatalf("application got %v first", m.MsgType())
	}
}

func TestKeepalive(t *testing.T) {
	cfg := quietConfig()
	cfg.EchoInterval = 20 * time.Millisecond
	cfg.EchoTimeout = 150 * time.Millisecond // slack for a loaded 2-core CI box
	c, p := connWithRawPeer(t, cfg)

	// Phase 1: the peer answers probes; the connection must stay up well
	// beyond interval+timeout.
	answering := make(chan struct{})
	stopAnswer := make(chan struct{})
	probes := 0
	go func() {
		defer close(answering)
		for {
			select {
			case f := <-p.frames:
				if Type(f[1]) == TypeEchoRequest {
					probes++
					f[1] = byte(TypeEchoReply)
					p.write(f)
				}
			case <-stopAnswer:
				return
			}
		}
	}()
	time.Sleep(400 * time.Millisecond)
	close(stopAnswer)
	<-answering
	select {
	case <-c.Done():
		t.Fatalf("connection died while the peer answered: %v", c.Err())
	default:
	}
	if probes < 3 {
		t.Fatalf("only %d probes in 400 ms with a 20 ms interval", probes)
	}
	if c.Stats().EchoRTT <= 0 {
		t.Fatalf("EchoRTT not measured")
	}

	// Phase 2: the peer keeps reading but stops answering: dead within
	// interval+timeout (plus scheduling slack).
	go func() {
		for range p.frames {
		}
	}()
	start := time.Now()
	err := waitDone(t, c, 2*time.Second)
	if !errors.Is(err, ErrPeerDead) {
		t.Fatalf("Err() = %v, want ErrPeerDead", err)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Fatalf("declared dead after %v, before the echo timeout", d)
	}
}

// TestKeepaliveAppBehind: while the application does not read and the
// read queue is full, the peer's silence must not count against it.
func TestKeepaliveAppBehind(t *testing.T) {
	cfg := quietConfig()
	cfg.EchoInterval = 20 * time.Millisecond
	cfg.EchoTimeout = 100 * time.Millisecond
	cfg.ReadQueue = 1
	c, p := connWithRawPeer(t, cfg)
	go func() {
		for range p.frames { // never answers probes
		}
	}()
	// One message is queued, one blocks the reader, one waits in the pipe.
	p.write(rawMsg(TypeBarrierRequest, 1, nil))
	p.write(rawMsg(TypeBarrierRequest, 2, nil))
	// Not p.write: it may block until the test ends, and t.Fatal must
	// not be called from another goroutine.
	go func() { _, _ = p.nc.Write(rawMsg(TypeBarrierRequest, 3, nil)) }()
	time.Sleep(300 * time.Millisecond)
	select {
	case <-c.Done():
		t.Fatalf("peer declared dead while we were not reading: %v", c.Err())
	default:
	}
	for range 3 {
		if _, err := c.ReadMessage(); err != nil {
			t.Fatal(err)
		}
	}
	if err := waitDone(t, c, 2*time.Second); !errors.Is(err, ErrPeerDead) {
		t.Fatalf("Err() = %v, want ErrPeerDead once reading resumed", err)
	}
}

// answerer is a Serve handler playing a switch: it answers FEATURES and
// STATS requests and barriers, and records the order of what it got.
type answerer struct {
	mu       sync.Mutex
	seen     []uint32
	features chan *FeaturesRequest
}

func (a *answerer) HandleMessage(c *Conn, m Message) {
	a.mu.Lock()
	a.seen = append(a.seen, m.GetXid())
	a.mu.Unlock()
	switch r := m.(type) {
	case *FeaturesRequest:
		if a.features != nil {
			a.features <- r
			return
		}
		_ = c.Send(&FeaturesReply{Header: Header{Xid: r.Xid}, DatapathID: uint64(r.Xid)})
	case *BarrierRequest:
		_ = c.Send(&BarrierReply{Header: Header{Xid: r.Xid}})
	case *StatsRequest:
		for i := range 3 {
			rep := &StatsReply{Header: Header{Xid: r.Xid}, Body: TableStatsReply{{TableID: uint8(i), Name: fmt.Sprint("t", i)}}}
			if i < 2 {
				rep.Flags = StatsReplyMore
			}
			_ = c.Send(rep)
		}
	case *GetConfigRequest:
		_ = c.Send(NewErrorFor(mustMarshal(r), ErrorTypeBadRequest, uint16(BadRequestEPerm)))
	}
}

func mustMarshal(m Message) []byte {
	b, err := Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

// TestRequestCorrelation answers 64 concurrent requests in reverse order;
// each caller must get the reply to its own xid.
func TestRequestCorrelation(t *testing.T) {
	ctl, sw := connPair(t, quietConfig(), quietConfig())
	ans := &answerer{features: make(chan *FeaturesRequest, 64)}
	go sw.Serve(ans)
	const n = 64
	go func() {
		var reqs []*FeaturesRequest
		for range n {
			reqs = append(reqs, <-ans.features)
		}
		for i := n - 1; i >= 0; i-- {
			_ = sw.Send(&FeaturesReply{Header: Header{Xid: reqs[i].Xid}, DatapathID: uint64(reqs[i].Xid)})
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := &FeaturesRequest{}
			r, err := ctl.Request(ctx, req)
			if err != nil {
				errs <- err
				return
			}
			if fr, ok := r.(*FeaturesReply); !ok || fr.DatapathID != uint64(req.Xid) || fr.Xid != req.Xid {
				errs <- fmt.Errorf("request xid %d got %T %+v", req.Xid, r, r)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestRequestMultiAndErrors(t *testing.T) {
	ctl, sw := connPair(t, quietConfig(), quietConfig())
	go sw.Serve(&answerer{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	parts, err := ctl.RequestMulti(ctx, &StatsRequest{Body: TableStatsRequest{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 3 {
		t.Fatalf("got %d parts, want 3", len(parts))
	}
	for i, p := range parts {
		body := p.(*StatsReply).Body.(TableStatsReply)
		if body[0].TableID != uint8(i) {
			t.Fatalf("part %d is table %d", i, body[0].TableID)
		}
	}

	_, err = ctl.Request(ctx, &GetConfigRequest{})
	var pe *PeerError
	var em *ErrorMsg
	if !errors.As(err, &pe) || !errors.As(err, &em) || em.Type != ErrorTypeBadRequest || pe.Request != TypeGetConfigRequest {
		t.Fatalf("got %v, want a PeerError wrapping BAD_REQUEST", err)
	}

	// Nobody answers a PORT_MOD-typed "request": the context ends it, and
	// the pending entry is gone.
	short, cancelShort := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancelShort()
	if _, err := ctl.Request(short, &SetConfig{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("unanswered request: %v", err)
	}
	if n := ctl.npending.Load(); n != 0 {
		t.Fatalf("%d requests still pending", n)
	}
}

func TestRequestMultiBounded(t *testing.T) {
	cfg := quietConfig()
	cfg.MaxMultipartBytes = 100
	ctl, sw := connPair(t, cfg, quietConfig())
	go sw.Serve(&answerer{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := ctl.RequestMulti(ctx, &StatsRequest{Body: TableStatsRequest{}}); !errors.Is(err, errMultipartTooBig) {
		t.Fatalf("got %v, want the multipart bound", err)
	}
}

// TestBarrierOrdering: when Barrier returns, the peer has handled every
// message sent before it.
func TestBarrierOrdering(t *testing.T) {
	ctl, sw := connPair(t, quietConfig(), quietConfig())
	ans := &answerer{}
	go sw.Serve(ans)
	for i := range 500 {
		if err := ctl.Send(&PacketOut{Header: Header{Xid: uint32(i + 1)}, BufferID: NoBuffer, InPort: PortNone}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := ctl.Barrier(ctx); err != nil {
		t.Fatal(err)
	}
	ans.mu.Lock()
	defer ans.mu.Unlock()
	if len(ans.seen) < 501 {
		t.Fatalf("barrier returned after the peer handled %d of 501 messages", len(ans.seen))
	}
	for i := range 500 {
		if ans.seen[i] != uint32(i+1) {
			t.Fatalf("message %d has xid %d: order lost", i, ans.seen[i])
		}
	}
}

func TestNextXidSkipsZero(t *testing.T) {
	c := NewConn(nopConn{}, quietConfig())
	c.xid.Store(^uint32(0) - 1)
	for range 4 {
		if c.NextXid() == 0 {
			t.Fatal("NextXid returned 0")
		}
	}
	m := &BarrierRequest{}
	c.xid.Store(41)
	if c.SendNonBlocking(m) == nil || m.Xid != 42 {
		// Not started: the send fails only after the xid was assigned.
		if m.Xid != 42 {
			t.Fatalf("xid %d, want 42", m.Xid)
		}
	}
}

// nopConn is a net.Conn that is never used for I/O.
type nopConn struct{ net.Conn }

func (nopConn) RemoteAddr() net.Addr { return nil }

func TestSendRaw(t *testing.T) {
	c, p := connWithRawPeer(t, quietConfig())
	bad := []struct {
		name string
		b    []byte
	}{
		{"short", []byte{1, 2, 0}},
		{"length mismatch", withLen(rawMsg(TypeBarrierRequest, 1, nil), 9)},
		{"version 4", func() []byte { b := rawMsg(TypeBarrierRequest, 1, nil); b[0] = 4; return b }()},
	}
	for _, tc := range bad {
		if err := c.SendRaw(tc.b); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	orig := rawMsg(TypeBarrierRequest, 0, nil)
	if err := c.SendRaw(orig); err != nil {
		t.Fatal(err)
	}
	f := p.next()
	if Type(f[1]) != TypeBarrierRequest || xidOf(f) == 0 {
		t.Fatalf("sent %x", f)
	}
	if xidOf(orig) != 0 {
		t.Fatalf("SendRaw modified the caller's buffer")
	}
}

// TestBackPressure: with a peer that does not read, the queue fills,
// SendNonBlocking reports ErrQueueFull, Send waits, and everything flows
// once the peer reads again.
func TestBackPressure(t *testing.T) {
	cfg := quietConfig()
	cfg.WriteQueue = 4
	a, b := net.Pipe()
	c := NewConn(a, cfg)
	errc := make(chan error, 1)
	go func() { errc <- c.Handshake(context.Background()) }()
	hello := make([]byte, 8)
	if _, err := io.ReadFull(b, hello); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Write(helloWith(1)); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	// The writer takes a first batch and blocks in Write (nobody reads the
	// pipe); then WriteQueue more fill the queue. The queue counts as full
	// once it stays full for 20 ms (the writer may not have run yet).
	sent, fullTwice := 0, false
	deadline := time.Now().Add(2 * time.Second)
	for !fullTwice {
		err := c.SendNonBlocking(&BarrierRequest{})
		switch {
		case errors.Is(err, ErrQueueFull):
			time.Sleep(20 * time.Millisecond)
			if err = c.SendNonBlocking(&BarrierRequest{}); errors.Is(err, ErrQueueFull) {
				fullTwice = true
			} else if err == nil {
				sent++
			}
		case err != nil:
			t.Fatal(err)
		default:
			sent++
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue never filled after %d sends", sent)
		}
	}
	if sent < cfg.WriteQueue+1 || sent > 2*cfg.WriteQueue {
		t.Fatalf("queue took %d messages, want %d..%d", sent, cfg.WriteQueue+1, 2*cfg.WriteQueue)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if err := c.SendContext(ctx, &BarrierRequest{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("SendContext on full queue: %v (sent %d, stats %+v)", err, sent, c.Stats())
	}
	blocked := make(chan error, 1)
	go func() { blocked <- c.Send(&BarrierRequest{}) }()
	select {
	case err := <-blocked:
		t.Fatalf("Send did not block on a full queue: %v", err)
	case <-time.After(30 * time.Millisecond):
	}
	// The peer reads again: the blocked Send completes, all messages arrive.
	p := newRawPeer(t, b)
	if err := <-blocked; err != nil {
		t.Fatal(err)
	}
	for range sent + 1 {
		if f := p.next(); Type(f[1]) != TypeBarrierRequest {
			t.Fatalf("got %x", f)
		}
	}
	if c.Stats().QueueFull < 2 {
		t.Fatalf("QueueFull = %d", c.Stats().QueueFull)
	}
}

// TestCloseFlushes: Close delivers everything queued before it.
func TestCloseFlushes(t *testing.T) {
	c, p := connWithRawPeer(t, quietConfig())
	const n = 1000
	for i := range n {
		if err := c.Send(&EchoRequest{Header: Header{Xid: uint32(i + 1)}, Data: []byte("data")}); err != nil {
			t.Fatal(err)
		}
	}
	closed := make(chan struct{})
	go func() { c.Close(); close(closed) }()
	for i := range n {
		if f := p.next(); xidOf(f) != uint32(i+1) {
			t.Fatalf("message %d has xid %d", i, xidOf(f))
		}
	}
	p.expectClosed()
	<-closed
	if !isClosedErr(c.Err()) {
		t.Fatalf("Err() = %v", c.Err())
	}
	if err := c.Send(&BarrierRequest{}); !isClosedErr(err) {
		t.Fatalf("Send after Close: %v", err)
	}
	if s := c.Stats(); s.WriteBatches >= n {
		t.Fatalf("no batching: %d writes for %d messages", s.WriteBatches, n)
	}
}

// TestCloseBounded: Close returns within CloseTimeout even if the peer
// never reads.
func TestCloseBounded(t *testing.T) {
	cfg := quietConfig()
	cfg.CloseTimeout = 50 * time.Millisecond
	a, b := net.Pipe()
	c := NewConn(a, cfg)
	go func() {
		_, _ = b.Write(helloWith(1))
	}()
	go func() { // read only our HELLO
		_, _ = io.ReadFull(b, make([]byte, 8))
	}()
	if err := c.Handshake(context.Background()); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		_ = c.SendNonBlocking(&BarrierRequest{})
	}
	start := time.Now()
	c.Close()
	if d := time.Since(start); d > time.Second {
		t.Fatalf("Close took %v", d)
	}
	b.Close()
}

func TestServeMuxDispatch(t *testing.T) {
	mux := NewServeMux()
	var got []string
	mux.HandleFunc(TypePacketIn, func(c *Conn, m Message) { got = append(got, "pi") })
	mux.HandleFunc(TypePortStatus, func(c *Conn, m Message) { got = append(got, "ps") })
	mux.Default = HandlerFunc(func(c *Conn, m Message) { got = append(got, "default:"+m.MsgType().String()) })
	for _, m := range []Message{&PacketIn{}, &FlowRemoved{}, &PortStatus{}, &PacketIn{}} {
		mux.HandleMessage(nil, m)
	}
	want := []string{"pi", "default:FLOW_REMOVED", "ps", "pi"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("dispatch %v, want %v", got, want)
	}
}

// TestReplyAfterTimeoutGoesToApp: a late reply is not lost or misrouted.
func TestReplyAfterTimeoutGoesToApp(t *testing.T) {
	c, p := connWithRawPeer(t, quietConfig())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	req := &FeaturesRequest{}
	if _, err := c.Request(ctx, req); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatal(err)
	}
	if f := p.next(); Type(f[1]) != TypeFeaturesRequest {
		t.Fatalf("sent %x", f)
	}
	p.write(mustMarshal(&FeaturesReply{Header: Header{Xid: req.Xid}}))
	m, err := c.ReadMessage()
	if err != nil || m.MsgType() != TypeFeaturesReply || m.GetXid() != req.Xid {
		t.Fatalf("late reply: %v %v", m, err)
	}
}

// TestNoErrorForError: a malformed ERROR is counted but never answered,
// so two confused peers cannot ping-pong errors forever.
func TestNoErrorForError(t *testing.T) {
	c, p := connWithRawPeer(t, quietConfig())
	p.write(rawMsg(TypeError, 5, []byte{0, 1})) // shorter than ofp_error_msg
	p.write(rawMsg(TypeBarrierRequest, 6, nil))
	if m, err := c.ReadMessage(); err != nil || m.GetXid() != 6 {
		t.Fatalf("got %v %v", m, err)
	}
	if s := c.Stats(); s.DecodeErrors != 1 {
		t.Fatalf("DecodeErrors = %d", s.DecodeErrors)
	}
	c.Close()
	p.expectClosed() // nothing was sent before the close
}

// TestGarbageFloodBoundedMemory streams 1000 maximal frames of an unknown
// type (64 MiB): each gets an ERROR, and the Conn reuses its buffers
// instead of allocating per frame.
func TestGarbageFloodBoundedMemory(t *testing.T) {
	c, p := connWithRawPeer(t, quietConfig())
	errorsSeen := make(chan int)
	go func() {
		n := 0
		for f := range p.frames {
			if Type(f[1]) == TypeError {
				n++
			}
		}
		errorsSeen <- n
	}()
	frame := rawMsg(Type(200), 1, make([]byte, MaxMessageLen-HeaderLen))
	const n = 1000
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		p.write(frame)
	}
	p.write(rawMsg(TypeBarrierRequest, 2, nil))
	if m, err := c.ReadMessage(); err != nil || m.MsgType() != TypeBarrierRequest {
		t.Fatalf("after the flood: %v %v", m, err)
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Fatalf("allocated %d MiB for %d MiB of garbage", grew>>20, n*len(frame)>>20)
	}
	c.Close()
	if got := <-errorsSeen; got != n {
		t.Fatalf("%d ERRORs for %d bad frames", got, n)
	}
}

// TestConnControllerRole: a Conn of RoleController against a Conn of the
// default switch role over a pipe: the controller's Handshake returns once
// the FEATURES_REPLY came and SET_CONFIG went out, with the features; the
// switch's application saw FEATURES_REQUEST and SET_CONFIG, no echo.
func TestConnControllerRole(t *testing.T) {
	a, b := net.Pipe()
	cfg := quietConfig()
	cfg.Role, cfg.MissSendLen = RoleController, 0x1234
	ctl, sw := NewConn(a, cfg), NewConn(b, quietConfig())
	defer ctl.Close()
	defer sw.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ctlErr := make(chan error, 1)
	go func() { ctlErr <- ctl.Handshake(ctx) }()
	if err := sw.Handshake(ctx); err != nil {
		t.Fatal(err)
	}
	m, err := sw.ReadMessage()
	if err != nil || m.MsgType() != TypeFeaturesRequest {
		t.Fatalf("switch read %v, %v; want FEATURES_REQUEST", m, err)
	}
	if err := sw.Send(&FeaturesReply{Header: Header{Xid: m.GetXid()}, DatapathID: 0xfeed, NBuffers: 1, NTables: 1}); err != nil {
		t.Fatal(err)
	}
	if err := <-ctlErr; err != nil {
		t.Fatalf("controller handshake: %v", err)
	}
	if f := ctl.Features(); f.DatapathID != 0xfeed {
		t.Fatalf("features %+v", f)
	}
	m, err = sw.ReadMessage()
	if sc, ok := m.(*SetConfig); err != nil || !ok || sc.MissSendLen != 0x1234 {
		t.Fatalf("switch read %v, %v; want SET_CONFIG with miss_send_len 0x1234", m, err)
	}
	// Both directions work: an echo from the controller is answered by the
	// switch's channel, not its application.
	if _, err := ctl.Echo(ctx); err != nil {
		t.Fatal(err)
	}
}

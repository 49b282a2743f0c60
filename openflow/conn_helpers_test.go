package openflow

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"testing"
	"time"
)

// quietConfig disables the keepalive so that the frames a test sees are
// exactly the ones it caused.
func quietConfig() ConnConfig {
	return ConnConfig{EchoInterval: -1, CloseTimeout: time.Second}
}

// rawPeer is a hand-driven OpenFlow peer: it writes arbitrary bytes and
// collects the frames the Conn under test sends.
type rawPeer struct {
	t      *testing.T
	nc     net.Conn
	frames chan []byte
	mu     sync.Mutex
	err    error // why reading stopped
}

func newRawPeer(t *testing.T, nc net.Conn) *rawPeer {
	p := &rawPeer{t: t, nc: nc}
	p.startReading()
	t.Cleanup(func() { nc.Close() })
	return p
}

func (p *rawPeer) write(b []byte) {
	p.t.Helper()
	if _, err := p.nc.Write(b); err != nil {
		p.t.Fatalf("raw peer write: %v", err)
	}
}

// next returns the next frame the Conn sent, failing the test on timeout
// or if the Conn closed.
func (p *rawPeer) next() []byte {
	p.t.Helper()
	select {
	case f, ok := <-p.frames:
		if !ok {
			p.t.Fatalf("raw peer: connection ended: %v", p.readErr())
		}
		return f
	case <-time.After(5 * time.Second):
		p.t.Fatalf("raw peer: no frame within 5 s")
	}
	return nil
}

// expectClosed waits until the Conn closes its end, failing if it sends
// anything else first.
func (p *rawPeer) expectClosed() {
	p.t.Helper()
	select {
	case f, ok := <-p.frames:
		if ok {
			p.t.Fatalf("raw peer: expected close, got frame %x", f)
		}
	case <-time.After(5 * time.Second):
		p.t.Fatalf("raw peer: connection not closed within 5 s")
	}
}

func (p *rawPeer) readErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// expectError reads the next frame and checks it is an ERROR of type et
// and code; it returns the decoded message.
func (p *rawPeer) expectError(et ErrorType, code uint16) *ErrorMsg {
	p.t.Helper()
	f := p.next()
	m, err := Unmarshal(f)
	if err != nil {
		p.t.Fatalf("undecodable frame %x: %v", f, err)
	}
	e, ok := m.(*ErrorMsg)
	if !ok || e.Type != et || e.Code != code {
		p.t.Fatalf("got %T %+v, want ERROR %v code %d", m, m, et, code)
	}
	return e
}

// connWithRawPeer returns a Conn that completed its handshake against a
// raw peer over net.Pipe (synchronous: the harshest transport for
// deadlocks).
func connWithRawPeer(t *testing.T, cfg ConnConfig) (*Conn, *rawPeer) {
	t.Helper()
	a, b := net.Pipe()
	c := NewConn(a, cfg)
	p := newRawPeer(t, b)
	errc := make(chan error, 1)
	go func() { errc <- c.Handshake(context.Background()) }()
	p.write(helloWith(1))
	if err := <-errc; err != nil {
		t.Fatalf("handshake: %v", err)
	}
	if h := p.next(); Type(h[1]) != TypeHello || h[0] != Version {
		t.Fatalf("first frame %x is not a 1.0 HELLO", h)
	}
	t.Cleanup(func() { c.Close() })
	return c, p
}

// connPair returns two Conns that completed their handshake with each
// other over net.Pipe.
func connPair(t *testing.T, cfgA, cfgB ConnConfig) (*Conn, *Conn) {
	t.Helper()
	a, b := net.Pipe()
	ca, cb := NewConn(a, cfgA), NewConn(b, cfgB)
	errc := make(chan error, 1)
	go func() { errc <- cb.Handshake(context.Background()) }()
	if err := ca.Handshake(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ca.Close(); cb.Close() })
	return ca, cb
}

// handshakeOver accepts one connection on l while dialling active, and
// completes the OpenFlow handshake on both ends.
func handshakeOver(t *testing.T, ctx context.Context, l net.Listener, active string, tlsCfg *TLSConfig) (client, server *Conn) {
	t.Helper()
	type res struct {
		c   *Conn
		err error
	}
	srv := make(chan res, 1)
	go func() {
		nc, err := l.Accept()
		if err != nil {
			srv <- res{err: err}
			return
		}
		c := NewConn(nc, quietConfig())
		srv <- res{c, c.Handshake(ctx)}
	}()
	nc, err := Dial(ctx, active, tlsCfg)
	if err != nil {
		t.Fatal(err)
	}
	client = NewConn(nc, quietConfig())
	if err := client.Handshake(ctx); err != nil {
		t.Fatalf("client handshake: %v", err)
	}
	r := <-srv
	if r.err != nil {
		t.Fatalf("server handshake: %v", r.err)
	}
	t.Cleanup(func() { client.Close(); r.c.Close() })
	return client, r.c
}

// waitDone waits for c to end and returns Err.
func waitDone(t *testing.T, c *Conn, within time.Duration) error {
	t.Helper()
	select {
	case <-c.Done():
		return c.Err()
	case <-time.After(within):
		t.Fatalf("connection still open after %v", within)
	}
	return nil
}

func xidOf(frame []byte) uint32 { return binary.BigEndian.Uint32(frame[4:8]) }

func isClosedErr(err error) bool { return errors.Is(err, ErrClosed) }

package controller

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/openflow"
)

// startServer runs a Server on a loopback port until the test ends.
func startServer(t *testing.T, app App, cfg ServerConfig) (addr string, core *Core, metrics *Metrics) {
	t.Helper()
	metrics = mustMetrics(t)
	core = NewCore(Config{App: app, Metrics: metrics})
	cfg.Core = core
	srv := NewServer(cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("Serve did not return after cancel")
		}
	})
	return ln.Addr().String(), core, metrics
}

// rawSwitch is a test peer speaking raw OpenFlow bytes over TCP.
type rawSwitch struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
}

func dialRaw(t *testing.T, addr string) *rawSwitch {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawSwitch{t: t, nc: nc, br: bufio.NewReader(nc)}
}

// dialSwitch connects and completes the handshake as datapath dpid.
func dialSwitch(t *testing.T, addr string, dpid uint64) *rawSwitch {
	t.Helper()
	s := dialRaw(t, addr)
	s.send(&openflow.Hello{Header: openflow.Header{Xid: 1}})
	s.expect(openflow.TypeHello)
	req := s.expect(openflow.TypeFeaturesRequest)
	s.send(&openflow.FeaturesReply{Header: openflow.Header{Xid: req.GetXid()}, DatapathID: dpid, NBuffers: 256, NTables: 1,
		Ports: []openflow.PhyPort{{PortNo: 1, Name: "p1"}, {PortNo: 2, Name: "p2"}, {PortNo: 3, Name: "p3"}}})
	s.expect(openflow.TypeSetConfig)
	return s
}

func (s *rawSwitch) send(m openflow.Message) {
	s.t.Helper()
	b, err := openflow.Marshal(m)
	if err != nil {
		s.t.Fatal(err)
	}
	s.sendRaw(b)
}

func (s *rawSwitch) sendRaw(b []byte) {
	s.t.Helper()
	if _, err := s.nc.Write(b); err != nil {
		s.t.Fatalf("write: %v", err)
	}
}

// read returns the next message, or an error (io.EOF when the controller
// closed the connection).
func (s *rawSwitch) read(timeout time.Duration) (openflow.Message, error) {
	_ = s.nc.SetReadDeadline(time.Now().Add(timeout))
	hdr, err := s.br.Peek(8)
	if err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint16(hdr[2:4]))
	b := make([]byte, n)
	if _, err := io.ReadFull(s.br, b); err != nil {
		return nil, err
	}
	return openflow.Unmarshal(b)
}

// expect reads until a message of type want arrives (answering nothing),
// failing on timeout.
func (s *rawSwitch) expect(want openflow.Type) openflow.Message {
	s.t.Helper()
	for {
		m, err := s.read(5 * time.Second)
		if err != nil {
			s.t.Fatalf("waiting for %v: %v", want, err)
		}
		if m.MsgType() == want {
			return m
		}
	}
}

// expectClosed reads until the controller closes the connection.
func (s *rawSwitch) expectClosed(timeout time.Duration) []openflow.Message {
	s.t.Helper()
	var got []openflow.Message
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		m, err := s.read(time.Until(deadline))
		if err == nil {
			got = append(got, m)
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			break
		}
		if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || isReset(err) {
			return got
		}
		// Undecodable bytes from the controller would be a bug.
		s.t.Fatalf("reading until close: %v", err)
	}
	s.t.Fatalf("connection still open after %v (got %d messages)", timeout, len(got))
	return nil
}

func isReset(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe)
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func header(version uint8, typ openflow.Type, length uint16, xid uint32) []byte {
	b := []byte{version, byte(typ), 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint16(b[2:], length)
	binary.BigEndian.PutUint32(b[4:], xid)
	return b
}

// checkService proves a switch still gets answers: a broadcast PACKET_IN
// must come back as a flooding PACKET_OUT with the same xid.
func checkService(t *testing.T, s *rawSwitch, xid uint32) {
	t.Helper()
	s.send(packetIn(xid, 5, 1, frame(bcast, macA, 0x0806, make([]byte, 28))))
	for {
		m, err := s.read(5 * time.Second)
		if err != nil {
			t.Fatalf("good switch got no service: %v", err)
		}
		if po, ok := m.(*openflow.PacketOut); ok && po.Xid == xid {
			return
		}
	}
}

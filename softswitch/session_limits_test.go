package softswitch

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/pseudocong/pseudocong/openflow"
)

// tryHello dials addr from local and attempts the HELLO exchange; it
// returns the connection if the switch answered, or nil if it hung up.
func tryHello(t *testing.T, addr, local string) *net.TCPConn {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial from %s: %v", local, err)
	}
	t.Cleanup(func() { nc.Close() })
	c := nc.(*net.TCPConn)
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	_, _ = c.Write([]byte{1, byte(openflow.TypeHello), 0, 8, 0, 0, 0, 1})
	b, err := readFrame(c)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || isReset(err) {
			c.Close()
			return nil
		}
		t.Fatalf("hello from %s: %v", local, err)
	}
	if openflow.Type(b[1]) != openflow.TypeHello {
		t.Fatalf("first message type %d", b[1])
	}
	_ = c.SetDeadline(time.Time{})
	return c
}

func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && !op.Timeout()
}

// trickle sends one byte of a message that never completes every period,
// until the connection fails or the test ends.
func trickle(t *testing.T, c net.Conn, period time.Duration) <-chan struct{} {
	closed := make(chan struct{})
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		defer close(closed)
		// A 1000-byte ECHO_REQUEST header, then its body a byte at a time.
		if _, err := c.Write([]byte{1, byte(openflow.TypeEchoRequest), 0x03, 0xe8, 0, 0, 0, 9}); err != nil {
			return
		}
		for {
			select {
			case <-stop:
				return
			case <-time.After(period):
			}
			if _, err := c.Write([]byte{0}); err != nil {
				return
			}
		}
	}()
	return closed
}

// Connections trickling bytes from one address cannot lock out another:
// beyond the per-peer limit they are refused at once, and a client from a
// second address (the whole 127/8 is loopback) is served.
func TestPerPeerLimitKeepsManagementPortOpen(t *testing.T) {
	reg := prometheus.NewRegistry()
	met, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	_, _, addr, _ := mgmtSwitchWith(t, Config{Metrics: met}, SessionConfig{
		MaxServiceConns: 8, MaxServiceConnsPerPeer: 4,
		ServiceIdleTimeout: time.Minute, // the tricklers stay
	})
	target := addr // 127.0.0.1, reachable from all of 127/8
	served, refused := 0, 0
	for range 8 {
		if c := tryHello(t, target, "127.0.0.1"); c != nil {
			served++
			trickle(t, c, 200*time.Millisecond)
		} else {
			refused++
		}
	}
	if served != 4 || refused != 4 {
		t.Fatalf("from one address: %d served, %d refused; want 4 and 4", served, refused)
	}
	c := tryHello(t, target, "127.0.0.2")
	if c == nil {
		t.Fatal("a client from another address was refused")
	}
	writeBytes(t, c, msgBytes(t, &openflow.FeaturesRequest{Header: openflow.Header{Xid: 3}}))
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if fr := readUntil(t, c, openflow.TypeFeaturesReply).(*openflow.FeaturesReply); fr.DatapathID != 0x77 {
		t.Fatalf("features %+v", fr)
	}
	if n := counterSum(t, reg, "pseudocong_switch_management_connections_refused_total", map[string]string{"reason": refusedPerPeer}); n != 4 {
		t.Fatalf("refused (per peer) = %v, want 4", n)
	}
	if n := counterSum(t, reg, "pseudocong_switch_management_connections", nil); n != 5 {
		t.Fatalf("management_connections = %v, want 5", n)
	}
}

// A connection that completed HELLO and then trickles bytes of a message
// that never completes is closed after the idle timeout, which counts whole
// messages; a quiet client that answers the switch's echo requests is not.
func TestTricklerClosedAfterIdleTimeout(t *testing.T) {
	reg := prometheus.NewRegistry()
	met, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	const idle = 400 * time.Millisecond
	_, _, addr, _ := mgmtSwitchWith(t, Config{Metrics: met}, SessionConfig{
		ServiceIdleTimeout: idle,
		Conn:               openflow.ConnConfig{EchoInterval: 50 * time.Millisecond, EchoTimeout: time.Second},
	})
	quiet := probeClient(t, addr) // answers echo requests by itself
	began := time.Now()
	tr := tryHello(t, addr, "127.0.0.1")
	if tr == nil {
		t.Fatal("refused")
	}
	closed := trickle(t, tr, 20*time.Millisecond)
	// Wait for the close event: the switch hangs up, our next write fails.
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("trickler still connected after 10 s")
	}
	if d := time.Since(began); d < idle {
		t.Fatalf("trickler closed after %v, before the idle timeout %v", d, idle)
	}
	waitFor(t, 5*time.Second, "idle timeout counted", func() bool {
		return counterSum(t, reg, "pseudocong_switch_connection_timeouts_total", map[string]string{"role": "service", "phase": "idle"}) == 1
	})
	// The quiet client outlived the trickler and still works.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := quiet.Request(ctx, &openflow.FeaturesRequest{}); err != nil {
		t.Fatalf("quiet client: %v", err)
	}
	if err := quiet.Err(); err != nil {
		t.Fatalf("quiet client closed: %v", err)
	}
}

// A passive connection that never sends HELLO holds its slot only for the
// short service handshake timeout.
func TestSilentManagementConnectionTimesOut(t *testing.T) {
	reg := prometheus.NewRegistry()
	met, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	_, _, addr, _ := mgmtSwitchWith(t, Config{Metrics: met}, SessionConfig{ServiceHandshakeTimeout: 200 * time.Millisecond})
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	began := time.Now()
	_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	// The switch's HELLO, then the close.
	if _, err := io.ReadAll(nc); err != nil {
		t.Fatalf("not closed: %v", err)
	}
	if d := time.Since(began); d < 150*time.Millisecond {
		t.Fatalf("closed after %v", d)
	}
	waitFor(t, 5*time.Second, "slot released", func() bool {
		return counterSum(t, reg, "pseudocong_switch_connection_timeouts_total", map[string]string{"role": "service", "phase": "handshake"}) == 1 &&
			counterSum(t, reg, "pseudocong_switch_management_connections", nil) == 0
	})
}

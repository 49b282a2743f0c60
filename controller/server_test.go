package controller

import (
	"context"
	"fmt"
	dto "github.com/prometheus/client_model/go"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/pseudocong/pseudocong/openflow"
)

func TestServerHandshakeAndForwarding(t *testing.T) {
	addr, core, metrics := startServer(t, NewReactive(ReactiveConfig{}), ServerConfig{MissSendLen: 200})
	s := dialRaw(t, addr)
	s.send(&openflow.Hello{Header: openflow.Header{Xid: 1}})
	if m := s.expect(openflow.TypeHello); m.Hdr().Version != 1 {
		t.Fatalf("controller HELLO version %d", m.Hdr().Version)
	}
	req := s.expect(openflow.TypeFeaturesRequest)
	// An echo during the handshake is answered.
	s.send(&openflow.EchoRequest{Header: openflow.Header{Xid: 77}})
	if m := s.expect(openflow.TypeEchoReply); m.GetXid() != 77 {
		t.Fatalf("echo reply xid %d", m.GetXid())
	}
	s.send(&openflow.FeaturesReply{Header: openflow.Header{Xid: req.GetXid()}, DatapathID: 0x42, Ports: []openflow.PhyPort{{PortNo: 1}}})
	sc := s.expect(openflow.TypeSetConfig).(*openflow.SetConfig)
	if sc.MissSendLen != 200 {
		t.Errorf("SET_CONFIG miss_send_len %d, want 200", sc.MissSendLen)
	}
	waitFor(t, "switch connected", func() bool { return core.Connected() == 1 })
	if got := testutil.ToFloat64(metrics.connected); got != 1 {
		t.Errorf("connected_switches = %v", got)
	}

	// Learn A on port 1 via a flood, then B→A gets a FLOW_MOD.
	checkService(t, s, 100)
	s.send(packetIn(101, 9, 2, tcpFrame(macA, macB, ipB, ipA, 5000, 80)))
	fm := s.expect(openflow.TypeFlowMod).(*openflow.FlowMod)
	if fm.BufferID != 9 || fm.Match.InPort != 2 || fm.Match.TpDst != 80 || len(fm.Actions) != 1 ||
		fm.Actions[0] != (openflow.ActionOutput{Port: 1}) {
		t.Errorf("FLOW_MOD = %+v", fm)
	}
	s.send(&openflow.EchoRequest{Header: openflow.Header{Xid: 78}, Data: []byte{1, 2, 3}})
	if m := s.expect(openflow.TypeEchoReply).(*openflow.EchoReply); m.Xid != 78 || len(m.Data) != 3 {
		t.Errorf("echo reply %+v", m)
	}
	s.nc.Close()
	waitFor(t, "switch disconnected", func() bool { return core.Connected() == 0 })
	if got := testutil.ToFloat64(metrics.messages[dirIn][openflow.TypePacketIn]); got != 2 {
		t.Errorf("messages_total{in,PACKET_IN} = %v, want 2", got)
	}
	// The one FLOW_MOD was timed, from the read that brought its
	// PACKET_IN to the write that carried it.
	var hist dto.Metric
	if err := metrics.handling.Write(&hist); err != nil {
		t.Fatal(err)
	}
	if h := hist.GetHistogram(); h.GetSampleCount() != 1 || h.GetSampleSum() <= 0 || h.GetSampleSum() > 1 {
		t.Errorf("handling histogram: %d samples, sum %v s; want one positive sample", h.GetSampleCount(), h.GetSampleSum())
	}
}

func TestServerManySwitches(t *testing.T) {
	const n = 64
	addr, core, _ := startServer(t, NewReactive(ReactiveConfig{}), ServerConfig{})
	var wg sync.WaitGroup
	sws := make([]*rawSwitch, n)
	for i := range n {
		sws[i] = dialSwitch(t, addr, uint64(i+1))
	}
	waitFor(t, "all switches connected", func() bool { return core.Connected() == n })
	errs := make(chan error, n)
	for i, s := range sws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each switch has its own MAC table: learn A, then 20 flows B→A.
			s.send(packetIn(1, 1, 1, frame(bcast, macA, 0x0806, nil)))
			for j := range 20 {
				s.send(packetIn(uint32(10+j), uint32(j), 2, tcpFrame(macA, macB, ipB, ipA, uint16(j), 80)))
			}
			flowMods := 0
			for flowMods < 20 {
				m, err := s.read(5 * time.Second)
				if err != nil {
					errs <- fmt.Errorf("switch %d: %v after %d flow mods", i+1, err, flowMods)
					return
				}
				if m.MsgType() == openflow.TypeFlowMod {
					flowMods++
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestServerHostilePeers: a peer that sends garbage, truncated, oversized or
// wrong-version messages gets an OpenFlow ERROR or a clean close, and a
// good switch connected at the same time keeps being served.
func TestServerHostilePeers(t *testing.T) {
	addr, core, metrics := startServer(t, NewReactive(ReactiveConfig{}),
		// Short enough for a quick test, long enough that a good switch on a
		// busy machine completes its handshake and is not taken for dead.
		ServerConfig{MaxMessageLen: 4096, HandshakeTimeout: 2 * time.Second, EchoInterval: time.Second})
	good := dialSwitch(t, addr, 1000)
	// The good switch keeps talking (echo requests) so the keepalive keeps it.
	stopPing := make(chan struct{})
	defer close(stopPing)
	go func() {
		for xid := uint32(1); ; xid++ {
			select {
			case <-stopPing:
				return
			case <-time.After(50 * time.Millisecond):
			}
			b, _ := openflow.Marshal(&openflow.EchoRequest{Header: openflow.Header{Xid: xid}})
			if _, err := good.nc.Write(b); err != nil {
				return
			}
		}
	}()
	var goodMu sync.Mutex
	goodService := func(xid uint32) {
		goodMu.Lock()
		defer goodMu.Unlock()
		checkService(t, good, xid)
	}
	goodService(1)

	rng := rand.New(rand.NewPCG(7, 7))
	garbage := make([]byte, 4000)
	for i := range garbage {
		garbage[i] = byte(rng.Uint32())
	}
	badActions := append(header(1, openflow.TypeFlowMod, 80, 9), make([]byte, 72)...)
	badActions[74], badActions[75] = 0, 3 // first action's length 3: not a multiple of 8

	type outcome int
	const (
		wantError outcome = iota // an ERROR of the given type/code, connection stays usable
		wantClose                // the controller closes (maybe after an ERROR)
	)
	tests := []struct {
		name      string
		handshake bool // complete the handshake first
		send      [][]byte
		closeSend bool // half-close after sending
		want      outcome
		errType   openflow.ErrorType
		errCode   uint16
	}{
		{name: "wrong version", handshake: true, send: [][]byte{header(4, openflow.TypeEchoRequest, 8, 5)},
			want: wantError, errType: openflow.ErrorTypeBadRequest, errCode: uint16(openflow.BadRequestBadVersion)},
		{name: "unknown type", handshake: true, send: [][]byte{header(1, 200, 8, 6)},
			want: wantError, errType: openflow.ErrorTypeBadRequest, errCode: uint16(openflow.BadRequestBadType)},
		{name: "packet-in body too short", handshake: true, send: [][]byte{append(header(1, openflow.TypePacketIn, 12, 7), 0, 0, 0, 1)},
			want: wantError, errType: openflow.ErrorTypeBadRequest, errCode: uint16(openflow.BadRequestBadLen)},
		{name: "bad action length", handshake: true, send: [][]byte{badActions},
			want: wantError, errType: openflow.ErrorTypeBadAction, errCode: uint16(openflow.BadActionBadLen)},
		{name: "oversized message is skipped", handshake: true, send: [][]byte{append(header(1, openflow.TypeVendor, 10000, 8), make([]byte, 9992)...)},
			want: wantError, errType: openflow.ErrorTypeBadRequest, errCode: uint16(openflow.BadRequestBadLen)},
		{name: "length below header size", handshake: true, send: [][]byte{header(1, openflow.TypeEchoRequest, 4, 9)},
			want: wantClose},
		{name: "huge length then close", handshake: true, send: [][]byte{append(header(1, openflow.TypePacketIn, 65535, 10), 1, 2, 3)},
			closeSend: true, want: wantClose},
		{name: "truncated message then close", handshake: true, send: [][]byte{header(1, openflow.TypePacketIn, 100, 11)[:5]},
			closeSend: true, want: wantClose},
		{name: "garbage after handshake", handshake: true, send: [][]byte{garbage}, closeSend: true, want: wantClose},
		{name: "garbage instead of hello", send: [][]byte{garbage}, want: wantClose},
		{name: "hello of version 0", send: [][]byte{header(0, openflow.TypeHello, 8, 1)}, want: wantClose},
		{name: "first message not hello", send: [][]byte{header(1, openflow.TypeEchoRequest, 8, 1)}, want: wantClose},
		{name: "silent peer hits the handshake timeout", want: wantClose},
		{name: "bad features reply", send: [][]byte{header(1, openflow.TypeHello, 8, 1), header(1, openflow.TypeFeaturesReply, 9, 2), {0}},
			want: wantClose},
		{name: "peer that never answers echoes is dropped", handshake: true, want: wantClose},
		{name: "flood of undecodable messages", handshake: true, send: func() [][]byte {
			// One write: the controller hangs up half way through.
			var b []byte
			for i := range 2 * maxConsecutiveBadFrames {
				b = append(b, header(1, 99, 8, uint32(i))...)
			}
			return [][]byte{b}
		}(), want: wantClose},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s *rawSwitch
			if tt.handshake {
				s = dialSwitch(t, addr, uint64(i+1))
			} else {
				s = dialRaw(t, addr)
			}
			for _, b := range tt.send {
				s.sendRaw(b)
			}
			if tt.closeSend {
				_ = s.nc.(*net.TCPConn).CloseWrite()
			}
			switch tt.want {
			case wantError:
				e := s.expect(openflow.TypeError).(*openflow.ErrorMsg)
				if e.Type != tt.errType || e.Code != tt.errCode {
					t.Errorf("ERROR %v/%s, want %v/%s", e.Type, openflow.CodeString(e.Type, e.Code), tt.errType, openflow.CodeString(tt.errType, tt.errCode))
				}
				// The connection is still served.
				checkService(t, s, 4242)
			case wantClose:
				s.expectClosed(3 * time.Second)
			}
			goodService(uint32(100 + i))
		})
	}
	if testutil.ToFloat64(metrics.protocolErrors) == 0 {
		t.Error("protocol_errors_total stayed 0")
	}
	waitFor(t, "only the good switch left", func() bool { return core.Connected() == 1 })
}

func TestServeStopsOnCancel(t *testing.T) {
	core := NewCore(Config{App: NewReactive(ReactiveConfig{})})
	srv := NewServer(ServerConfig{Core: core})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	s := dialSwitch(t, ln.Addr().String(), 1)
	waitFor(t, "connected", func() bool { return core.Connected() == 1 })
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve returned %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return")
	}
	s.expectClosed(2 * time.Second)
	if core.Connected() != 0 {
		t.Errorf("Connected = %d after shutdown", core.Connected())
	}
}

// TestServerHelloNegotiation: the TCP shell's Endpoint runs the one
// openflow.Channel: a HELLO that offers 1.0 gets the FEATURES_REQUEST, an
// incompatible or malformed one gets ERROR HELLO_FAILED and the
// connection is closed (the switch side, openflow.Conn, does the same).
func TestServerHelloNegotiation(t *testing.T) {
	addr, _, _ := startServer(t, NewReactive(ReactiveConfig{}), ServerConfig{HandshakeTimeout: 5 * time.Second})
	bitmap := func(v uint8, bits uint32) []byte {
		b := header(v, openflow.TypeHello, 16, 1)
		b = append(b, 0, 1, 0, 8, 0, 0, 0, 0)
		b[12], b[13], b[14], b[15] = byte(bits>>24), byte(bits>>16), byte(bits>>8), byte(bits)
		return b
	}
	tests := []struct {
		name  string
		hello []byte
		ok    bool
	}{
		{"1.0", header(1, openflow.TypeHello, 8, 1), true},
		{"1.3 without bitmap", header(4, openflow.TypeHello, 8, 1), true},
		{"1.3 bitmap with 1.0", bitmap(4, 1<<1|1<<4), true},
		{"0x00", header(0, openflow.TypeHello, 8, 1), false},
		{"1.3 bitmap without 1.0", bitmap(4, 1<<4), false},
		{"malformed element length", append(header(4, openflow.TypeHello, 12, 1), 0, 1, 0, 200), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := dialRaw(t, addr)
			s.sendRaw(tt.hello)
			if tt.ok {
				s.expect(openflow.TypeFeaturesRequest)
				return
			}
			got := s.expectClosed(3 * time.Second)
			var e *openflow.ErrorMsg
			for _, m := range got {
				if em, ok := m.(*openflow.ErrorMsg); ok {
					e = em
				}
			}
			if e == nil || e.Type != openflow.ErrorTypeHelloFailed || e.Code != uint16(openflow.HelloFailedIncompatible) || len(e.Data) == 0 {
				t.Fatalf("got %v before the close, want ERROR HELLO_FAILED/INCOMPATIBLE with an explanation", got)
			}
		})
	}
}

// TestServerDropsPeerThatDoesNotRead: a switch that floods PACKET_INs but
// never reads the answers blocks our writes; after WriteTimeout it is
// dropped, and a good switch is served throughout.
func TestServerDropsPeerThatDoesNotRead(t *testing.T) {
	addr, core, _ := startServer(t, NewReactive(ReactiveConfig{}), ServerConfig{WriteTimeout: time.Second})
	good := dialSwitch(t, addr, 1)
	stuck := dialSwitch(t, addr, 2)
	_ = stuck.nc.(*net.TCPConn).SetReadBuffer(4096)
	waitFor(t, "both connected", func() bool { return core.Connected() == 2 })

	b, _ := openflow.Marshal(packetIn(1, openflow.NoBuffer, 1, frame(bcast, macA, 0x0806, make([]byte, 1000))))
	var burst []byte
	for range 1000 {
		burst = append(burst, b...)
	}
	go func() {
		for {
			if _, err := stuck.nc.Write(burst); err != nil {
				return // dropped by the controller
			}
		}
	}()
	waitFor(t, "the non-reading switch dropped", func() bool { return core.Connected() == 1 })
	checkService(t, good, 7)
}

package mptcp

import (
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/tcp"
)

// The options on the wire: MP_CAPABLE with keys on the first subflow's
// SYN, SYN-ACK and third ACK, MP_JOIN with the server's token on the
// second's SYN, DSS mappings on data and DATA_ACKs from the server.
func TestOptionsOnTheWire(t *testing.T) {
	sim := clock.NewSim(epoch)
	var client, server *Conn
	type rec struct {
		path  int
		toSrv bool
		s     tcp.Segment
	}
	var log []rec
	deliver := func(toSrv bool) func(int, *tcp.Segment) {
		return func(path int, s *tcp.Segment) {
			cp := *s
			log = append(log, rec{path, toSrv, cp})
			sim.AfterFunc(10*time.Millisecond, func() {
				if toSrv {
					server.Input(path, &cp)
				} else {
					client.Input(path, &cp)
				}
			})
		}
	}
	tc := tcp.DefaultConfig()
	base := Config{Clock: sim, Subflow: tc, RcvBuf: 64 << 10, Seed: 1}
	cc, sc := base, base
	cc.Output, cc.Key = deliver(true), 0xc11e
	sc.Output, sc.Key = deliver(false), 0x5e7e
	var err error
	if client, err = NewClient(cc, 2); err != nil {
		t.Fatal(err)
	}
	if server, err = NewServer(sc); err != nil {
		t.Fatal(err)
	}
	client.Bulk()
	if err := client.Connect(); err != nil {
		t.Fatal(err)
	}
	if err := sim.TryRunUntil(epoch.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if !client.Capable() || !server.Capable() {
		t.Fatal("MP_CAPABLE not negotiated")
	}
	var capSYN, capSYNACK, capAck, join, dss, dataAck bool
	for _, r := range log {
		o, syn := r.s.MP, r.s.Flags&tcp.FlagSYN != 0
		switch {
		case r.toSrv && syn && r.path == 0:
			capSYN = o.Kind&tcp.MPCapable != 0 && o.Key == 0xc11e
		case !r.toSrv && syn && r.path == 0:
			capSYNACK = o.Kind&tcp.MPCapable != 0 && o.Key == 0x5e7e
		case r.toSrv && syn && r.path == 1:
			join = o.Kind&tcp.MPJoin != 0 && o.Token == Token(0x5e7e) && o.AddrID == 1
		case r.toSrv && r.path == 0 && o.Kind&tcp.MPCapable != 0:
			capAck = o.Key == 0xc11e && o.PeerKey == 0x5e7e
		}
		if r.toSrv && r.s.Len > 0 {
			m := o.Map[0]
			if o.NumMap < 1 || uint32(m.Len) < uint32(r.s.Len) && o.NumMap < 2 {
				t.Fatalf("data segment %v without a mapping covering it: %+v", &r.s, o)
			}
			dss = true
		}
		if !r.toSrv && o.HasDataAck && o.DataAck > 0 && o.DataWnd > 0 {
			dataAck = true
		}
		if r.s.OptionsLen() > 0 && r.s.WireLen() <= 40+r.s.Len {
			t.Fatalf("options not counted in the wire length")
		}
	}
	if !capSYN || !capSYNACK || !capAck || !join || !dss || !dataAck {
		t.Fatalf("MP_CAPABLE SYN %v SYN-ACK %v ACK %v, MP_JOIN %v, DSS %v, DATA_ACK %v: want all", capSYN, capSYNACK, capAck, join, dss, dataAck)
	}
}

// A join with a wrong token is refused; a SYN without MPTCP too.
func TestJoinWrongTokenRefused(t *testing.T) {
	sim := clock.NewSim(epoch)
	srv, err := NewServer(Config{Clock: sim, Subflow: tcp.DefaultConfig(), RcvBuf: 1 << 16, Output: func(int, *tcp.Segment) {}, Key: 7})
	if err != nil {
		t.Fatal(err)
	}
	srv.Input(0, &tcp.Segment{SrcPort: 1, DstPort: 5001, Flags: tcp.FlagSYN, WScale: -1, MP: tcp.MPOption{Kind: tcp.MPCapable, Key: 9}})
	srv.Input(1, &tcp.Segment{SrcPort: 2, DstPort: 5001, Flags: tcp.FlagSYN, WScale: -1, MP: tcp.MPOption{Kind: tcp.MPJoin, Token: Token(7) + 1}})
	srv.Input(1, &tcp.Segment{SrcPort: 3, DstPort: 5001, Flags: tcp.FlagSYN, WScale: -1})
	if len(srv.subs) != 1 {
		t.Fatalf("%d subflows: want only the MP_CAPABLE one", len(srv.subs))
	}
	srv.Input(1, &tcp.Segment{SrcPort: 4, DstPort: 5001, Flags: tcp.FlagSYN, WScale: -1, MP: tcp.MPOption{Kind: tcp.MPJoin, Token: Token(7)}})
	if len(srv.subs) != 2 {
		t.Fatalf("%d subflows: want the join with the right token accepted", len(srv.subs))
	}
}

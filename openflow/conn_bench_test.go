package openflow

import (
	"context"
	"net"
	"testing"
)

// benchPair connects a "switch" and a "controller" Conn over loopback TCP
// (or net.Pipe) with the handshake done.
func benchPair(b *testing.B, transport string) (sw, ctl *Conn) {
	b.Helper()
	var a, c net.Conn
	if transport == "pipe" {
		a, c = net.Pipe()
	} else {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		acc := make(chan net.Conn, 1)
		go func() {
			nc, _ := l.Accept()
			acc <- nc
		}()
		if a, err = net.Dial("tcp", l.Addr().String()); err != nil {
			b.Fatal(err)
		}
		c = <-acc
	}
	sw, ctl = NewConn(a, quietConfig()), NewConn(c, quietConfig())
	errc := make(chan error, 1)
	go func() { errc <- ctl.Handshake(context.Background()) }()
	if err := sw.Handshake(context.Background()); err != nil {
		b.Fatal(err)
	}
	if err := <-errc; err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sw.Close(); ctl.Close() })
	return sw, ctl
}

// BenchmarkPacketInFlowMod measures the controller-side throughput that
// matters for the paper: the switch streams PACKET_INs (128-byte frames),
// the controller answers each with an exact-match FLOW_MOD, the switch
// reads them back. One op = one PACKET_IN in, one FLOW_MOD out.
func BenchmarkPacketInFlowMod(b *testing.B) {
	for _, transport := range []string{"tcp", "pipe"} {
		b.Run(transport, func(b *testing.B) {
			sw, ctl := benchPair(b, transport)
			go ctl.Serve(HandlerFunc(func(c *Conn, m Message) {
				pi, ok := m.(*PacketIn)
				if !ok {
					return
				}
				fm := FlowMod{
					Header:   Header{Xid: pi.Xid},
					Match:    Match{InPort: pi.InPort, DlType: 0x0800},
					Command:  FlowModAdd,
					Priority: 100, IdleTimeout: 60,
					BufferID: pi.BufferID, OutPort: PortNone,
					Actions: []Action{ActionOutput{Port: 2}},
				}
				_ = c.Send(&fm)
			}))
			pi := &PacketIn{BufferID: NoBuffer, TotalLen: 128, InPort: 1, Data: make([]byte, 128)}
			frame := mustMarshal(pi)
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			b.ResetTimer()
			go func() {
				for i := range b.N {
					pi.Xid = uint32(i + 1)
					if err := sw.Send(pi); err != nil {
						return
					}
				}
			}()
			for range b.N {
				m, err := sw.ReadMessage()
				if err != nil {
					b.Fatal(err)
				}
				if m.MsgType() != TypeFlowMod {
					b.Fatalf("got %v", m.MsgType())
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pktin/s")
			s := ctl.Stats()
			if s.WriteBatches > 0 {
				b.ReportMetric(float64(s.MessagesOut)/float64(s.WriteBatches), "msgs/write")
			}
		})
	}
}

// BenchmarkEchoRoundTrip measures one request/reply round trip at a time
// (latency rather than throughput) over loopback TCP.
func BenchmarkEchoRoundTrip(b *testing.B) {
	sw, _ := benchPair(b, "tcp")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sw.Echo(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSend measures the enqueue path alone (encoding into the write
// buffer) with a peer that drains the socket.
func BenchmarkSend(b *testing.B) {
	sw, ctl := benchPair(b, "tcp")
	go ctl.Serve(HandlerFunc(func(*Conn, Message) {}))
	fm := &FlowMod{Header: Header{Xid: 1}, Command: FlowModAdd, BufferID: NoBuffer, OutPort: PortNone,
		Actions: []Action{ActionOutput{Port: 2}}}
	b.ReportAllocs()
	for b.Loop() {
		if err := sw.Send(fm); err != nil {
			b.Fatal(err)
		}
	}
}

package controller

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/openflow"
)

// FuzzServeConn feeds arbitrary bytes, after a valid handshake, to a
// switch connection of the reactive controller: it must neither panic nor
// hang, and everything it sends back must be well-formed OpenFlow 1.0.
func FuzzServeConn(f *testing.F) {
	pin, _ := openflow.Marshal(packetIn(3, 1, 1, frame(bcast, macA, 0x0806, nil)))
	f.Add(pin)
	f.Add(header(1, openflow.TypeEchoRequest, 8, 1))
	f.Add(header(1, openflow.TypePacketIn, 4, 1))
	f.Add(append(header(1, openflow.TypeFlowMod, 80, 9), make([]byte, 72)...))
	f.Add(header(4, openflow.TypeHello, 8, 1))
	f.Add([]byte{1, 10, 0xff, 0xff, 0, 0, 0, 0, 1, 2, 3})
	hello, _ := openflow.Marshal(&openflow.Hello{Header: openflow.Header{Xid: 1}})
	features, _ := openflow.Marshal(&openflow.FeaturesReply{Header: openflow.Header{Xid: 1}, DatapathID: 9})
	f.Fuzz(func(t *testing.T, data []byte) {
		core := NewCore(Config{App: NewReactive(ReactiveConfig{})})
		srv := NewServer(ServerConfig{Core: core, EchoInterval: -1, HandshakeTimeout: time.Second, WriteTimeout: time.Second})
		ctl, sw := net.Pipe()
		done := make(chan error, 1)
		go func() { done <- srv.ServeConn(context.Background(), ctl) }()
		var got bytes.Buffer
		copied := make(chan struct{})
		go func() { _, _ = io.Copy(&got, sw); close(copied) }()
		_ = sw.SetWriteDeadline(time.Now().Add(2 * time.Second))
		for _, b := range [][]byte{hello, features, data, pin} {
			if _, err := sw.Write(b); err != nil {
				break // the controller hung up: allowed
			}
		}
		// Let the controller answer, then hang up.
		time.Sleep(time.Millisecond)
		_ = sw.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("ServeConn did not return after the switch closed")
		}
		<-copied
		out := got.Bytes()
		for len(out) >= openflow.HeaderLen {
			n := int(binary.BigEndian.Uint16(out[2:4]))
			if n > len(out) {
				break // cut by the close
			}
			if _, err := openflow.Unmarshal(out[:n]); err != nil {
				t.Fatalf("controller sent an undecodable message % x: %v", out[:n], err)
			}
			out = out[n:]
		}
		if core.Connected() != 0 {
			t.Fatalf("Connected = %d after the connection ended", core.Connected())
		}
	})
}

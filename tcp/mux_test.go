package tcp

import (
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
)

// TestMux: three clients connect to one listening port through a server
// Mux, each gets its own connection, and all transfers finish.
func TestMux(t *testing.T) {
	sim := clock.NewSim(epoch)
	server := NewMux()
	clients := NewMux()
	send := func(to *Mux) func(*Segment) {
		return func(s *Segment) {
			cp := *s
			sim.AfterFunc(5*time.Millisecond, func() { to.Input(&cp) })
		}
	}
	server.Listen(80, func(remote uint16) (*Conn, error) {
		c := DefaultConfig()
		c.Clock, c.Output, c.LocalPort, c.RemotePort = sim, send(clients), 80, remote
		return New(c)
	})
	done := 0
	for i := range 3 {
		c := DefaultConfig()
		c.Clock, c.Output, c.LocalPort, c.RemotePort = sim, send(server), uint16(5000+i), 80
		c.ISS = uint32(i) * 1000
		conn, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		clients.Add(conn)
		Transfer(conn, 100_000*(i+1), func(time.Time) { done++ })
		if err := conn.Connect(); err != nil {
			t.Fatal(err)
		}
	}
	send(server)(&Segment{SrcPort: 9, DstPort: 81, Flags: FlagSYN}) // no listener
	sim.RunUntil(epoch.Add(10 * time.Second))
	if done != 3 || server.Len() != 3 || server.Unmatched != 1 {
		t.Errorf("done %d, server connections %d, unmatched %d; want 3, 3, 1", done, server.Len(), server.Unmatched)
	}
}

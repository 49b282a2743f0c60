package netsim

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/packet"
)

// The demultiplexer picks the most specific binding, a host with two
// interfaces sends by the prefix of the destination, and frames to other
// hosts are ignored and counted.
func TestHostDemuxAndRouting(t *testing.T) {
	clk := clock.NewSim(time.Unix(0, 0))
	h := NewHost(clk, "h")
	a := netip.MustParsePrefix("10.0.0.1/24")
	b := netip.MustParsePrefix("10.9.0.1/16")
	ia, err := h.AddIface("eth0", DefaultMAC(a.Addr()), a)
	if err != nil {
		t.Fatal(err)
	}
	ib, err := h.AddIface("eth1", DefaultMAC(b.Addr()), b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.AddIface("eth2", packet.MAC{2}, a); err == nil || !strings.Contains(err.Error(), "address 10.0.0.1") {
		t.Errorf("duplicate address accepted: %v", err)
	}
	var sentOn []string
	ia.SetTransmit(func([]byte) { sentOn = append(sentOn, "eth0") })
	ib.SetTransmit(func([]byte) { sentOn = append(sentOn, "eth1") })

	var got []string
	ep := func(name string) Endpoint {
		return EndpointFunc(func(*packet.Packet, []byte) { got = append(got, name) })
	}
	for _, bind := range []struct {
		b    Binding
		name string
	}{
		{Binding{Proto: packet.IPProtocolTCP}, "any"},
		{Binding{Proto: packet.IPProtocolTCP, Port: 80}, "port80"},
		{Binding{Proto: packet.IPProtocolTCP, Port: 80, Addr: b.Addr()}, "port80@eth1"},
	} {
		if _, err := h.Attach(bind.b, ep(bind.name)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.Attach(Binding{Proto: packet.IPProtocolTCP}, ep("again")); err == nil {
		t.Error("a second binding of the same key was accepted")
	}
	frame := func(dstMAC packet.MAC, dst netip.Addr, port uint16) []byte {
		p := packet.Packet{Layers: packet.LayerEthernet | packet.LayerIPv4 | packet.LayerTCP,
			Ethernet: packet.Ethernet{Src: packet.MAC{2, 1}, Dst: dstMAC},
			IPv4:     packet.IPv4{TTL: 64, Src: [4]byte{10, 0, 0, 9}, Dst: dst.As4()},
			TCP:      packet.TCP{SrcPort: 999, DstPort: port, Flags: packet.TCPFlagSYN}}
		f, err := p.AppendBinary(nil)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	ia.Receive(frame(ia.MAC, a.Addr(), 80))                        // port80
	ib.Receive(frame(ib.MAC, b.Addr(), 80))                        // port80@eth1
	ia.Receive(frame(ia.MAC, a.Addr(), 443))                       // any
	ia.Receive(frame(packet.MAC{2, 7}, a.Addr(), 80))              // another host's MAC
	ia.Receive(frame(ia.MAC, netip.MustParseAddr("10.0.0.7"), 80)) // another host's address
	if want := "port80 port80@eth1 any"; strings.Join(got, " ") != want {
		t.Errorf("delivered to %v, want %s", got, want)
	}
	if st := h.Stats(); st.NotForUs != 2 || st.Delivered != 3 {
		t.Errorf("stats %+v, want 2 not for us, 3 delivered", st)
	}
	// Routing: 10.9.x.x leaves by eth1, the rest by eth0 (the default).
	h.AddNeighbor(netip.MustParseAddr("10.9.3.3"), packet.MAC{2, 3})
	h.AddNeighbor(netip.MustParseAddr("192.168.1.1"), packet.MAC{2, 4})
	for _, dst := range []string{"10.9.3.3", "192.168.1.1"} {
		p := packet.Packet{Layers: packet.LayerIPv4 | packet.LayerUDP,
			IPv4: packet.IPv4{TTL: 64, Src: a.Addr().As4(), Dst: netip.MustParseAddr(dst).As4()}}
		if err := h.Send(&p); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Join(sentOn, " ") != "eth1 eth0" {
		t.Errorf("sent on %v, want eth1 then eth0", sentOn)
	}
}

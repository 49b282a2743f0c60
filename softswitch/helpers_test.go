package softswitch

import (
	"net"
	"sync"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/openflow"
)

var start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// fakeChannel records what the switch sends. Every message goes through
// the wire encoding and back, so the tests also check the encoder.
type fakeChannel struct {
	t    *testing.T
	role Role
	mu   sync.Mutex
	msgs []openflow.Message
}

func newChannel(t *testing.T, role Role) *fakeChannel { return &fakeChannel{t: t, role: role} }

func (c *fakeChannel) Role() Role { return c.role }

func (c *fakeChannel) Send(m openflow.Message) error {
	b, err := openflow.Marshal(m)
	if err != nil {
		c.t.Errorf("switch sent an unencodable %v: %v", m.MsgType(), err)
		return err
	}
	d, err := openflow.Unmarshal(b)
	if err != nil {
		c.t.Errorf("switch sent a %v that does not decode: %v", m.MsgType(), err)
		return err
	}
	c.mu.Lock()
	c.msgs = append(c.msgs, d)
	c.mu.Unlock()
	return nil
}

// take returns and forgets the messages received so far.
func (c *fakeChannel) take() []openflow.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.msgs
	c.msgs = nil
	return m
}

// only asserts exactly one message of type T was received and returns it.
func only[T openflow.Message](t *testing.T, c *fakeChannel) T {
	t.Helper()
	msgs := c.take()
	if len(msgs) != 1 {
		t.Fatalf("want one message, got %d: %v", len(msgs), types(msgs))
	}
	m, ok := msgs[0].(T)
	if !ok {
		t.Fatalf("want %T, got %v %+v", m, msgs[0].MsgType(), msgs[0])
	}
	return m
}

func types(msgs []openflow.Message) []string {
	var s []string
	for _, m := range msgs {
		s = append(s, m.MsgType().String())
	}
	return s
}

func expectError(t *testing.T, c *fakeChannel, typ openflow.ErrorType, code uint16) {
	t.Helper()
	e := only[*openflow.ErrorMsg](t, c)
	if e.Type != typ || e.Code != code {
		t.Fatalf("want error %v/%s, got %v/%s", typ, openflow.CodeString(typ, code), e.Type, openflow.CodeString(e.Type, e.Code))
	}
}

// rig is a switch with n in-memory ports on a simulated clock and a
// controller channel.
type rig struct {
	t     *testing.T
	sim   *clock.Sim
	sw    *Switch
	ports map[uint16]*MemPort
	ctl   *fakeChannel
}

func newRig(t *testing.T, nports int, cfg Config) *rig {
	sim := clock.NewSim(start)
	r := &rig{t: t, sim: sim, sw: New(sim, cfg), ports: map[uint16]*MemPort{}, ctl: newChannel(t, RoleController)}
	for i := 1; i <= nports; i++ {
		p := NewMemPort(uint16(i), "p"+string(rune('0'+i)), MemPortMAC(1, uint16(i)), nil)
		r.ports[uint16(i)] = p
		if err := r.sw.AddPort(p); err != nil {
			t.Fatal(err)
		}
	}
	r.sw.Attach(r.ctl)
	return r
}

func (r *rig) send(m openflow.Message) { r.sw.HandleMessage(r.ctl, m) }

// sent returns the frames port no transmitted since the last call.
func (r *rig) sent(no uint16) [][]byte { return r.ports[no].Take() }

var (
	macH1 = net.HardwareAddr{0x02, 0, 0, 0, 0, 0x01}
	macH2 = net.HardwareAddr{0x02, 0, 0, 0, 0, 0x02}
)

// tcpFrame builds a checksummed Ethernet/IPv4/TCP frame with a payload.
func tcpFrame(t *testing.T, src, dst net.HardwareAddr, sport, dport uint16, payload int) []byte {
	t.Helper()
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, TOS: 0x02, Protocol: layers.IPProtocolTCP,
		SrcIP: net.IP{10, 0, 0, 1}, DstIP: net.IP{10, 0, 0, 2}}
	tcp := &layers.TCP{SrcPort: layers.TCPPort(sport), DstPort: layers.TCPPort(dport), Seq: 1, SYN: true, Window: 1000}
	_ = tcp.SetNetworkLayerForChecksum(ip)
	return serialize(t, &layers.Ethernet{SrcMAC: src, DstMAC: dst, EthernetType: layers.EthernetTypeIPv4}, ip, tcp,
		gopacket.Payload(make([]byte, payload)))
}

func udpFrame(t *testing.T, sport, dport uint16) []byte {
	t.Helper()
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolUDP,
		SrcIP: net.IP{10, 0, 0, 1}, DstIP: net.IP{10, 0, 0, 2}}
	udp := &layers.UDP{SrcPort: layers.UDPPort(sport), DstPort: layers.UDPPort(dport)}
	_ = udp.SetNetworkLayerForChecksum(ip)
	return serialize(t, &layers.Ethernet{SrcMAC: macH1, DstMAC: macH2, EthernetType: layers.EthernetTypeIPv4}, ip, udp,
		gopacket.Payload("hello"))
}

func serialize(t *testing.T, ls ...gopacket.SerializableLayer) []byte {
	t.Helper()
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func flowMod(cmd uint16, m openflow.Match, prio uint16, actions ...openflow.Action) *openflow.FlowMod {
	return &openflow.FlowMod{Header: openflow.Header{Version: openflow.Version, Type: openflow.TypeFlowMod, Xid: 7},
		Match: m, Command: cmd, Priority: prio, BufferID: openflow.NoBuffer, OutPort: openflow.PortNone, Actions: actions}
}

func output(p uint16) openflow.Action { return openflow.ActionOutput{Port: p} }

func matchInPort(p uint16) openflow.Match {
	return openflow.Match{Wildcards: openflow.WildcardAll &^ openflow.WildcardInPort, InPort: p}
}

func statsReq(xid uint32, body openflow.StatsRequestBody) *openflow.StatsRequest {
	return &openflow.StatsRequest{Header: openflow.Header{Version: openflow.Version, Type: openflow.TypeStatsRequest, Xid: xid}, Body: body}
}

package netsim

import (
	"strings"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/packet"
)

const twoHosts = `
name: pair
switches:
  - name: s1
hosts:
  - name: a
    address: 10.0.0.1/24
  - name: b
    interfaces:
      - {name: eth0, address: 10.0.0.2/24}
links:
  - {a: a, b: s1, delay: 1ms}
  - {a: "b:eth0", b: "s1:5", rate: 8mbit, delay: 1ms, qdisc: "droptail,limit=3"}
`

func TestTopologyCompiles(t *testing.T) {
	top, err := ParseTopology([]byte(twoHosts), "test")
	if err != nil {
		t.Fatal(err)
	}
	p, err := top.Compile()
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Links[0].B.Name; got != "s1:1" {
		t.Errorf("auto port: %s, want s1:1", got)
	}
	if got := p.Links[1].B.Name; got != "s1:5" {
		t.Errorf("explicit port: %s", got)
	}
	if p.Links[0].Rate != IdealRate || p.Links[1].Rate != 8_000_000 {
		t.Errorf("rates %d %d", p.Links[0].Rate, p.Links[1].Rate)
	}
	if p.Hosts[0].Ifaces[0].MAC != DefaultMAC(p.Hosts[0].Ifaces[0].Prefix.Addr()) {
		t.Errorf("default mac %v", p.Hosts[0].Ifaces[0].MAC)
	}
}

func TestTopologyErrors(t *testing.T) {
	cases := []struct{ name, doc, want string }{
		{"unknown node", `
switches: [{name: s1}]
hosts: [{name: a, address: 10.0.0.1}]
links: [{a: a, b: s9}]`, `unknown node "s9"`},
		{"duplicate address", `
switches: [{name: s1}]
hosts: [{name: a, address: 10.0.0.1}, {name: b, address: 10.0.0.1/8}]
links: [{a: a, b: s1}, {a: b, b: s1}]`, "duplicate address 10.0.0.1"},
		{"missing link end", `
switches: [{name: s1}]
hosts: [{name: a, address: 10.0.0.1}]
links: [{a: a}]`, "missing link end b"},
		{"duplicate port", `
switches: [{name: s1}, {name: s2}]
hosts: [{name: a, address: 10.0.0.1}]
links: [{a: a, b: "s1:1"}, {a: "s2:1", b: "s1:1"}]`, "duplicate port s1:1"},
		{"host interface twice", `
switches: [{name: s1}]
hosts: [{name: a, address: 10.0.0.1}]
links: [{a: "a:eth0", b: s1}, {a: "a:eth0", b: s1}]`, "duplicate port a:eth0"},
		{"duplicate name", `
switches: [{name: x}]
hosts: [{name: x, address: 10.0.0.1}]`, `duplicate node name "x"`},
		{"bad qdisc", `
switches: [{name: s1}]
hosts: [{name: a, address: 10.0.0.1}]
links: [{a: a, b: s1, qdisc: "fq_codel"}]`, `unknown kind "fq_codel"`},
		{"bad rate", `
switches: [{name: s1}]
hosts: [{name: a, address: 10.0.0.1}]
links: [{a: a, b: s1, rate: "20"}]`, "no unit"},
		{"unknown key", `
switches: [{name: s1, colour: red}]`, "colour"},
		{"no switch", `
hosts: [{name: a, address: 10.0.0.1}]`, "at least one switch"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseTopology([]byte(c.doc), "t.yaml")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
			if !strings.Contains(err.Error(), "t.yaml") {
				t.Errorf("error %v does not name the source", err)
			}
		})
	}
}

func TestChain(t *testing.T) {
	for _, k := range []int{1, 3} {
		top, err := Chain(k)
		if err != nil {
			t.Fatal(err)
		}
		p, err := top.Compile()
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Switches) != k || len(p.Links) != k+1 {
			t.Fatalf("chain:%d: %d switches %d links", k, len(p.Switches), len(p.Links))
		}
		for _, s := range p.Switches {
			if len(s.Ports) != 2 || s.Ports[0].No+s.Ports[1].No != 3 {
				t.Errorf("chain:%d: %s ports %v", k, s.Name, s.Ports)
			}
		}
	}
	if _, err := Chain(0); err == nil {
		t.Error("chain:0 accepted")
	}
	if _, ok, err := Generated("chain:x"); !ok || err == nil {
		t.Errorf("chain:x: ok %v err %v", ok, err)
	}
}

// hub is a SwitchNode that floods every frame to its other ports.
type hub struct{ tx map[uint16]func([]byte) }

func (h *hub) AddPort(no uint16, _ string, tx func([]byte)) (func([]byte), error) {
	if h.tx == nil {
		h.tx = map[uint16]func([]byte){}
	}
	h.tx[no] = tx
	return func(f []byte) {
		for p, out := range h.tx {
			if p != no {
				out(append([]byte(nil), f...))
			}
		}
	}, nil
}

func buildPair(t *testing.T, clk *clock.Sim, rec *Recorder) *Network {
	t.Helper()
	top, err := ParseTopology([]byte(twoHosts), "test")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := top.Compile()
	n, err := Build(clk, p, BuildOptions{Switch: func(int, PlanSwitch) (SwitchNode, error) { return &hub{}, nil }, Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Without static ARP a's first packet waits for the ARP exchange; the
// echo reply comes back after four link delays plus the serialisation
// on the 8 Mbit/s link.
func TestHostARPAndEcho(t *testing.T) {
	clk := clock.NewSim(time.Unix(0, 0))
	n := buildPair(t, clk, nil)
	a, _ := n.Host("a")
	b, _ := n.Host("b")
	var got []time.Duration
	send, err := a.Attach(Binding{Proto: packet.IPProtocolICMP}, EndpointFunc(func(p *packet.Packet, _ []byte) {
		if p.ICMP.Type == packet.ICMPEchoReply {
			got = append(got, clk.Now().Sub(time.Unix(0, 0)))
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	ping := func() {
		p := &packet.Packet{Layers: packet.LayerIPv4 | packet.LayerICMP,
			IPv4: packet.IPv4{TTL: 64, Src: a.Addr().As4(), Dst: b.Addr().As4()},
			ICMP: packet.ICMP{Type: packet.ICMPEchoRequest, ID: 7, Seq: 1}}
		if err := send(p); err != nil {
			t.Error(err)
		}
	}
	ping()
	clk.Run()
	if len(got) != 1 {
		t.Fatalf("%d echo replies, want 1 (a %+v b %+v)", len(got), a.Stats(), b.Stats())
	}
	// ARP request and reply, then echo request and reply: 4 round trips of
	// 2 ms each way... 2 crossings of 2 links (1 ms each) per message.
	ser := 60 * 8 * time.Second / 8_000_000 // one 60-byte frame at 8 Mbit/s
	if want := 4*2*time.Millisecond + 4*ser; got[0] != want {
		t.Errorf("first echo after %v, want %v", got[0], want)
	}
	if m, ok := a.Neighbor(b.Addr()); !ok || m != b.Ifaces()[0].MAC {
		t.Errorf("a did not learn b's MAC: %v %v", m, ok)
	}
	if st := b.Stats(); st.ARPReplies != 1 || st.EchoReplies != 1 {
		t.Errorf("b stats %+v", st)
	}
	start := clk.Now()
	ping()
	clk.Run()
	if d := clk.Now().Sub(start); d != 2*2*time.Millisecond+2*ser {
		t.Errorf("second echo after %v, want one round trip", d)
	}
	if a.Err() != nil || b.Err() != nil {
		t.Errorf("host errors %v %v", a.Err(), b.Err())
	}
}

// The recorder sees the 8 Mbit/s queue build up and drop, and the run
// still ends.
func TestRecorderSeesQueue(t *testing.T) {
	clk := clock.NewSim(time.Unix(0, 0))
	rec, err := NewRecorder(100*time.Microsecond, 0)
	if err != nil {
		t.Fatal(err)
	}
	top, _ := ParseTopology([]byte(strings.Replace(twoHosts, "static", "", 1)), "test")
	top.StaticARP = true
	p, _ := top.Compile()
	n, err := Build(clk, p, BuildOptions{Switch: func(int, PlanSwitch) (SwitchNode, error) { return &hub{}, nil }, Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := n.Host("b")
	a, _ := n.Host("a")
	send, _ := b.Attach(Binding{Proto: packet.IPProtocolUDP, Port: 9}, EndpointFunc(func(*packet.Packet, []byte) {}))
	var recv int
	if _, err := a.Attach(Binding{Proto: packet.IPProtocolUDP}, EndpointFunc(func(*packet.Packet, []byte) { recv++ })); err != nil {
		t.Fatal(err)
	}
	for range 10 { // a burst: 1 on the wire, 3 queued, 6 dropped
		p := &packet.Packet{Layers: packet.LayerIPv4 | packet.LayerUDP,
			IPv4: packet.IPv4{TTL: 64, Src: b.Addr().As4(), Dst: a.Addr().As4()},
			UDP:  packet.UDP{SrcPort: 9, DstPort: 5000}, Payload: make([]byte, 958)} // 1000-byte frames
		if err := send(p); err != nil {
			t.Fatal(err)
		}
	}
	clk.Run()
	rec.Stop()
	if recv != 4 {
		t.Fatalf("received %d, want 4", recv)
	}
	var maxQ int
	var drops, delivered uint64
	for _, s := range rec.Links {
		if s.Link == "b:eth0>s1:5" && s.Queue == -1 {
			maxQ = max(maxQ, s.QLen)
			drops += s.Dropped
			delivered += s.Delivered
		}
	}
	if maxQ != 3 || drops != 6 || delivered != 4 {
		t.Errorf("queue max %d drops %d delivered %d, want 3 6 4", maxQ, drops, delivered)
	}
	var fb uint64
	for _, f := range rec.Flows {
		fb += f.Packets
	}
	if fb != 4 {
		t.Errorf("flow series counted %d packets, want 4", fb)
	}
}

package sim

import (
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/controller"
	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/netsim"
	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/packet"
	"github.com/pseudocong/pseudocong/probes"
	"github.com/pseudocong/pseudocong/profile"
	"github.com/pseudocong/pseudocong/softswitch/dataplane"
)

func loadProfile(t *testing.T, name string) *profile.Profile {
	t.Helper()
	p, err := profile.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func dataScenario(prof *profile.Profile, flows int, rate float64, base int) Scenario {
	return Scenario{Kind: Data, Flows: flows, Rate: rate, BaseLoad: base, Priority: "ascending",
		Profile: prof, ControllerService: 2 * time.Millisecond, LinkLatency: time.Microsecond,
		Timers: probes.Berkeley(), Seed: 5}
}

// Paper 000 Fig. 19's premise, on the counters the pipeline keeps: in a
// data run every rule is preloaded in the backing table, so each data
// packet and each ACK is served by a swap-in of its rule — one per rule,
// 2 per flow — and none misses the table (no Packet-In, no Flow-Mod). A
// preloaded rule that does not match its frames (ruleMatch drifting from
// the controller's match) turns the swap-ins into misses: this fails, and
// so does Run (checkDataPremise).
func TestDataRunIsServedBySwapIns(t *testing.T) {
	for _, name := range []string{"pica8-p3297", "ideal"} {
		t.Run(name, func(t *testing.T) {
			const flows = 20
			o, err := Run(dataScenario(loadProfile(t, name), flows, 100, 100))
			if err != nil {
				t.Fatal(err)
			}
			checkSwapInsOnly(t, o, flows)
		})
	}
}

// checkSwapInsOnly asserts the premise on a data run of n flows that fit
// in the TCAM (no evictions, so no rule is swapped in twice).
func checkSwapInsOnly(t *testing.T, o *Outcome, n int) {
	t.Helper()
	for i, ok := range o.Delivered {
		if !ok {
			t.Errorf("flow %d unanswered", i)
		}
	}
	if o.ProbeMisses != 0 || o.Controller.FlowMods != 0 {
		t.Errorf("%d data packets missed the table, %d rules installed; want 0 and 0", o.ProbeMisses, o.Controller.FlowMods)
	}
	// The warm-up's two ARP announcements are the run's only Packet-Ins.
	if o.Agent.Misses != 2 || o.Controller.PacketIns != 2 {
		t.Errorf("%d misses, %d Packet-Ins at the controller; want the 2 ARPs", o.Agent.Misses, o.Controller.PacketIns)
	}
	if want := uint64(2 * n); o.Pipeline.SwapInJobs != want || o.Table.SwapIns != want {
		t.Errorf("%d swap-in jobs, %d swap-ins; want %d (one per rule)", o.Pipeline.SwapInJobs, o.Table.SwapIns, want)
	}
	if o.Table.Evictions != 0 || o.InBacking != 0 {
		t.Errorf("%d evictions, %d rules left in the backing table; want 0, 0", o.Table.Evictions, o.InBacking)
	}
	// Every first transmission waited for a swap-in; retransmissions
	// sent while theirs was running too, later ones hit the TCAM.
	if got := o.Pipeline.Delivered[dataplane.PathSwapIn]; got < uint64(2*n) {
		t.Errorf("%d packets delivered after a swap-in, want at least %d", got, 2*n)
	}
	if got := o.Pipeline.Delivered[dataplane.PathInstallWait]; got != 0 {
		t.Errorf("%d packets waited for an install, want 0", got)
	}
}

// The rules a data run preloads must be the very rules the controller
// would have installed for the same frames, field for field, or they rank
// and match differently. ruleMatch builds them from controller.FlowMatch;
// here the reactive app itself, fed the frames the probe hosts send, is
// the reference.
func TestRuleMatchIsTheControllers(t *testing.T) {
	clk := clock.NewSim(simStart)
	sc := dataScenario(loadProfile(t, "pica8-p3297"), 5, 100, 0)
	n, err := newNetwork(clk, sc, controller.PriorityAscending)
	if err != nil {
		t.Fatal(err)
	}
	app := controller.NewReactive(controller.ReactiveConfig{Priority: controller.PriorityAscending, IdleTimeout: -1})
	core := controller.NewCore(controller.Config{App: app, Clock: clk})
	sw := &fakeSwitch{features: &openflow.FeaturesReply{DatapathID: 1}}
	session := core.Connect(sw)
	packetIn := func(frame []byte, inPort uint16) {
		session.Handle(&openflow.PacketIn{
			Header:   openflow.Header{Version: openflow.Version, Type: openflow.TypePacketIn},
			BufferID: openflow.NoBuffer, TotalLen: uint16(len(frame)), InPort: inPort, Data: frame,
		})
	}
	hop := n.path[0]
	build := func(p *packet.Packet, src, dst packet.MAC) []byte {
		p.Layers |= packet.LayerEthernet
		p.Ethernet.Src, p.Ethernet.Dst = src, dst
		f, err := p.AppendBinary(nil)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	// The hosts announce themselves, as in a run: the app learns both.
	for _, h := range []struct {
		f    netsim.PlanIface
		port uint16
	}{{n.client, hop.in}, {n.server, hop.out}} {
		a := packet.Packet{Layers: packet.LayerARP, ARP: packet.ARP{Op: packet.ARPRequest, SenderMAC: h.f.MAC,
			SenderIP: h.f.Prefix.Addr().As4(), TargetIP: h.f.Prefix.Addr().As4()}}
		packetIn(build(&a, h.f.MAC, packet.Broadcast), h.port)
	}
	tuples, err := probes.GenerateTuples(5, probes.TupleSpec{Src: n.client.Prefix.Addr(), Dst: n.server.Prefix.Addr()}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tu := range tuples {
		for _, dir := range []struct {
			t        probes.FiveTuple
			inPort   uint16
			typ      probes.PacketType
			src, dst packet.MAC
		}{{tu, hop.in, probes.PacketData, n.client.MAC, n.server.MAC}, {tu.Reverse(), hop.out, probes.PacketACK, n.server.MAC, n.client.MAC}} {
			var p packet.Packet
			if err := fillTCP(&p, probes.ProbePacket{Type: dir.typ, Tuple: dir.t, PayloadLen: probes.DefaultPayloadLen}); err != nil {
				t.Fatal(err)
			}
			sw.flowMods = nil
			packetIn(build(&p, dir.src, dir.dst), dir.inPort)
			if len(sw.flowMods) != 1 {
				t.Fatalf("%v: the controller sent %d Flow-Mods, want 1", dir.t, len(sw.flowMods))
			}
			got, err := n.ruleMatch(dir.t, dir.inPort)
			if err != nil {
				t.Fatal(err)
			}
			if want := sw.flowMods[0].Match; got != want {
				t.Errorf("%v in port %d:\nruleMatch  %+v\ncontroller %+v", dir.t, dir.inPort, got, want)
			}
		}
	}
}

// fakeSwitch is the controller's side of a switch that records Flow-Mods.
type fakeSwitch struct {
	features *openflow.FeaturesReply
	flowMods []openflow.FlowMod
}

func (s *fakeSwitch) DPID() uint64                      { return s.features.DatapathID }
func (s *fakeSwitch) Features() *openflow.FeaturesReply { return s.features }
func (s *fakeSwitch) Send(m openflow.Message) error {
	if fm, ok := m.(*openflow.FlowMod); ok {
		s.flowMods = append(s.flowMods, *fm) // the app reuses its FlowMod
	}
	return nil
}

// The profile's backing_table.swap_in_upcall reaches the simulated
// switch: one flow, both of its rules swapped in one after the other on
// an idle CPU, so with the upcall (the built-in profile) the RTT is
// exactly two packet_in_costs longer than without it. Fails if the sim
// ignores the key (hard-codes either value).
func TestSwapInUpcallFromProfile(t *testing.T) {
	on := loadProfile(t, "pica8-p3297")
	if on.BackingTable.SwapInUpcall == nil || !*on.BackingTable.SwapInUpcall {
		t.Fatal("fixture: the pica8 profile's swap_in_upcall is not on")
	}
	off := loadProfile(t, "pica8-p3297")
	no := false
	off.BackingTable.SwapInUpcall = &no
	rtt := func(p *profile.Profile) time.Duration {
		t.Helper()
		o, err := Run(dataScenario(p, 1, 10, 0))
		if err != nil {
			t.Fatal(err)
		}
		checkSwapInsOnly(t, o, 1)
		return o.Delays[0]
	}
	withUpcall, without := rtt(on), rtt(off)
	if d, want := withUpcall-without, 2*on.Agent.PacketInCost; d != want {
		t.Errorf("RTT with upcall %v, without %v: difference %v, want 2 × packet_in_cost = %v", withUpcall, without, d, want)
	}
}

// The base load's rules are ruleMatch's, built from a template.
func TestBaseRulesAreRuleMatch(t *testing.T) {
	clk := clock.NewSim(simStart)
	n, err := newNetwork(clk, dataScenario(loadProfile(t, "pica8-p3297"), 1, 10, 0), controller.PriorityAscending)
	if err != nil {
		t.Fatal(err)
	}
	next, err := n.baseRules(n.path[0].in)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 1, 255, 256, 3999} {
		want, err := n.ruleMatch(baseTuple(i), n.path[0].in)
		if err != nil {
			t.Fatal(err)
		}
		if got := next(i); got != want {
			t.Errorf("base rule %d:\ntemplate  %+v\nruleMatch %+v", i, got, want)
		}
	}
}

package controller

import (
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/pseudocong/pseudocong/openflow"
)

const (
	ipA = 0x0a000001
	ipB = 0x0a000002
)

// flowWildcards is what the reactive app leaves unmatched for a TCP/UDP/ICMP
// flow: VLAN id and priority, and the ToS.
const flowWildcards = openflow.WildcardDlVlan | openflow.WildcardDlVlanPcp | openflow.WildcardNwTos

func TestReactiveForwarding(t *testing.T) {
	type step struct {
		name string
		in   *openflow.PacketIn
		want []openflow.Message // nil: nothing sent
	}
	out := func(p uint16) []openflow.Action { return []openflow.Action{openflow.ActionOutput{Port: p}} }
	fm := func(xid, buf uint32, prio uint16, m openflow.Match, port uint16) *openflow.FlowMod {
		return &openflow.FlowMod{Header: openflow.Header{Version: 1, Type: openflow.TypeFlowMod, Xid: xid, Length: 80},
			Match: m, Cookie: ReactiveCookie, Command: openflow.FlowModAdd, IdleTimeout: 5, Priority: prio,
			BufferID: buf, OutPort: openflow.PortNone, Actions: out(port)}
	}
	po := func(xid, buf uint32, inPort, port uint16, data []byte) *openflow.PacketOut {
		return &openflow.PacketOut{Header: openflow.Header{Version: 1, Type: openflow.TypePacketOut, Xid: xid, Length: uint16(24 + len(data))},
			BufferID: buf, InPort: inPort, Actions: out(port), Data: data}
	}
	tcpBA := tcpFrame(macA, macB, ipB, ipA, 40000, 80)
	tcpMatch := openflow.Match{Wildcards: flowWildcards, InPort: 2, DlSrc: macB, DlDst: macA, DlType: 0x0800,
		NwProto: 6, NwSrc: ipB, NwDst: ipA, TpSrc: 40000, TpDst: 80}
	udpBA := frame(macA, macB, 0x0800, ipv4(17, ipB, ipA, ports(53, 5353)))
	icmpBA := frame(macA, macB, 0x0800, ipv4(1, ipB, ipA, []byte{8, 0, 0, 0, 0, 0, 0, 0}))
	greBA := frame(macA, macB, 0x0800, ipv4(47, ipB, ipA, nil))
	arpBA := frame(macA, macB, 0x0806, make([]byte, 28))
	truncated := tcpFrame(macA, macB, ipB, ipA, 1, 2)

	steps := []step{
		{"unknown destination floods, buffered", packetIn(1, 7, 1, tcpFrame(macB, macA, ipA, ipB, 80, 40000)),
			[]openflow.Message{po(1, 7, 1, openflow.PortFlood, nil)}},
		{"known destination, buffered: one FLOW_MOD releasing the buffer", packetIn(2, 8, 2, tcpBA),
			[]openflow.Message{fm(2, 8, 100, tcpMatch, 1)}},
		{"known destination, unbuffered: FLOW_MOD then PACKET_OUT with the data", packetIn(3, openflow.NoBuffer, 2, tcpBA),
			[]openflow.Message{fm(3, openflow.NoBuffer, 100, tcpMatch, 1), po(3, openflow.NoBuffer, 2, 1, tcpBA)}},
		{"UDP ports are matched", packetIn(4, 9, 2, udpBA), []openflow.Message{fm(4, 9, 100, openflow.Match{
			Wildcards: flowWildcards, InPort: 2, DlSrc: macB, DlDst: macA, DlType: 0x0800, NwProto: 17, NwSrc: ipB, NwDst: ipA, TpSrc: 53, TpDst: 5353}, 1)}},
		{"ICMP type and code go in tp_src/tp_dst", packetIn(5, 10, 2, icmpBA), []openflow.Message{fm(5, 10, 100, openflow.Match{
			Wildcards: flowWildcards, InPort: 2, DlSrc: macB, DlDst: macA, DlType: 0x0800, NwProto: 1, NwSrc: ipB, NwDst: ipA, TpSrc: 8, TpDst: 0}, 1)}},
		{"other IP protocols leave the ports wildcarded", packetIn(6, 11, 2, greBA), []openflow.Message{fm(6, 11, 100, openflow.Match{
			Wildcards: flowWildcards | openflow.WildcardTpSrc | openflow.WildcardTpDst, InPort: 2, DlSrc: macB, DlDst: macA,
			DlType: 0x0800, NwProto: 47, NwSrc: ipB, NwDst: ipA}, 1)}},
		{"non-IP matches L2 only", packetIn(7, 12, 2, arpBA), []openflow.Message{fm(7, 12, 100, openflow.Match{
			Wildcards: openflow.WildcardAll &^ (openflow.WildcardInPort | openflow.WildcardDlSrc | openflow.WildcardDlDst | openflow.WildcardDlType),
			InPort:    2, DlSrc: macB, DlDst: macA, DlType: 0x0806}, 1)}},
		{"broadcast floods", packetIn(8, openflow.NoBuffer, 3, frame(bcast, macC, 0x0806, make([]byte, 28))),
			[]openflow.Message{po(8, openflow.NoBuffer, 3, openflow.PortFlood, frame(bcast, macC, 0x0806, make([]byte, 28)))}},
		{"destination behind the input port: nothing", packetIn(9, 13, 1, tcpFrame(macA, macB, ipB, ipA, 1, 2)), nil},
		{"unbuffered but truncated: FLOW_MOD, no PACKET_OUT", &openflow.PacketIn{Header: openflow.Header{Version: 1, Xid: 10},
			BufferID: openflow.NoBuffer, TotalLen: 1500, InPort: 3, Data: truncated},
			[]openflow.Message{fm(10, openflow.NoBuffer, 100, openflow.Match{Wildcards: flowWildcards, InPort: 3, DlSrc: macB, DlDst: macA,
				DlType: 0x0800, NwProto: 6, NwSrc: ipB, NwDst: ipA, TpSrc: 1, TpDst: 2}, 1)}},
		{"runt frame: nothing", packetIn(11, 14, 2, []byte{1, 2, 3}), nil},
	}

	app := NewReactive(ReactiveConfig{})
	core := NewCore(Config{App: app})
	sw := newFakeSwitch(1)
	sess := core.Connect(sw)
	for _, s := range steps {
		sess.Handle(s.in)
		got := sw.take()
		if !reflect.DeepEqual(got, s.want) {
			t.Errorf("%s:\n got  %s\n want %s", s.name, dump(got), dump(s.want))
		}
	}
}

func dump(ms []openflow.Message) string {
	s := ""
	for _, m := range ms {
		switch m := m.(type) {
		case *openflow.FlowMod:
			s += "FLOW_MOD{" + m.Match.String() + " prio=" + itoa(int(m.Priority)) + " buf=" + itoa(int(m.BufferID)) +
				" xid=" + itoa(int(m.Xid)) + " actions=" + openflow.FormatActions(m.Actions) + "} "
		case *openflow.PacketOut:
			s += "PACKET_OUT{buf=" + itoa(int(m.BufferID)) + " in=" + itoa(int(m.InPort)) + " actions=" +
				openflow.FormatActions(m.Actions) + " data=" + itoa(len(m.Data)) + "} "
		default:
			s += m.MsgType().String() + " "
		}
	}
	return "[" + s + "]"
}

func itoa(v int) string { return strconv.Itoa(v) }

func TestReactiveVLANFrame(t *testing.T) {
	// 802.1Q tagged TCP: dl_type is the inner type and the ports are found.
	inner := tcpFrame(macA, macB, ipB, ipA, 1000, 22)
	tagged := append(append(append([]byte{}, inner[:12]...), 0x81, 0x00, 0x00, 0x0a), inner[12:]...)
	m, ok := flowMatch(tagged, 4)
	if !ok || m.DlType != 0x0800 || m.TpSrc != 1000 || m.TpDst != 22 || m.NwDst != ipA {
		t.Fatalf("flowMatch(tagged) = %+v, %v", m, ok)
	}
}

func TestPriorityStrategies(t *testing.T) {
	tests := []struct {
		strategy PriorityStrategy
		constant uint16
		start    uint16 // counter preset, 0 = fresh
		want     []uint16
	}{
		{PriorityConstant, 100, 0, []uint16{100, 100, 100}},
		{PriorityConstant, 7, 0, []uint16{7, 7}},
		{PriorityAscending, 100, 0, []uint16{1, 2, 3, 4}},
		{PriorityAscending, 100, 65534, []uint16{65534, 65535, 65535}},
		{PriorityDescending, 100, 0, []uint16{65535, 65534, 65533}},
		{PriorityDescending, 100, 2, []uint16{2, 1, 1}},
	}
	for _, tt := range tests {
		c := newPriorityCounter(tt.strategy, tt.constant)
		if tt.start != 0 {
			c.next = tt.start
		}
		var got []uint16
		for range tt.want {
			got = append(got, c.Next())
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%v from %d: got %v want %v", tt.strategy, tt.start, got, tt.want)
		}
	}
	for _, s := range []string{"constant", "ascending", "descending"} {
		p, err := ParsePriorityStrategy(s)
		if err != nil || p.String() != s {
			t.Errorf("ParsePriorityStrategy(%q) = %v, %v", s, p, err)
		}
	}
	if _, err := ParsePriorityStrategy("random"); err == nil {
		t.Error("ParsePriorityStrategy(random) accepted")
	}
}

// TestReactivePrioritiesPerSwitch drives two switches through the app: each
// has its own ascending counter, as each switch has its own TCAM.
func TestReactivePrioritiesPerSwitch(t *testing.T) {
	for _, tt := range []struct {
		strategy PriorityStrategy
		want     []uint16
	}{
		{PriorityAscending, []uint16{1, 2, 3}},
		{PriorityDescending, []uint16{65535, 65534, 65533}},
		{PriorityConstant, []uint16{100, 100, 100}},
	} {
		core := NewCore(Config{App: NewReactive(ReactiveConfig{Priority: tt.strategy})})
		sw1, sw2 := newFakeSwitch(1), newFakeSwitch(2)
		s1, s2 := core.Connect(sw1), core.Connect(sw2)
		for _, s := range []*Session{s1, s2} {
			s.Handle(packetIn(1, 1, 1, frame(bcast, macA, 0x0806, nil))) // learn A on port 1
			for i := range len(tt.want) {
				s.Handle(packetIn(2, 2, 2, tcpFrame(macA, macB, ipB, ipA, uint16(1000+i), 80)))
			}
		}
		for _, sw := range []*fakeSwitch{sw1, sw2} {
			var got []uint16
			for _, m := range sw.take() {
				if f, ok := m.(*openflow.FlowMod); ok {
					got = append(got, f.Priority)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%v switch %d: priorities %v, want %v", tt.strategy, sw.dpid, got, tt.want)
			}
		}
	}
}

func TestReactiveTimeoutsAndMACBound(t *testing.T) {
	metrics := mustMetrics(t)
	app := NewReactive(ReactiveConfig{IdleTimeout: 30 * time.Second, HardTimeout: 90 * time.Second, MaxMACs: 2, Metrics: metrics})
	sess := NewCore(Config{App: app, Metrics: metrics}).Connect(newFakeSwitch(1))
	sw := sess.sw.(*fakeSwitch)
	for i, m := range []mac{macA, macB, macC} { // C does not fit
		sess.Handle(packetIn(1, 1, uint16(i+1), frame(bcast, m, 0x0806, nil)))
	}
	sw.take()
	if got := testutil.ToFloat64(metrics.macsDropped); got != 1 {
		t.Errorf("mac_learning_dropped_total = %v, want 1", got)
	}
	sess.Handle(packetIn(2, 5, 1, tcpFrame(macC, macA, ipA, ipB, 1, 2))) // C unknown: flood
	sess.Handle(packetIn(3, 6, 1, tcpFrame(macB, macA, ipA, ipB, 1, 2))) // B known on port 2
	got := sw.take()
	if len(got) != 2 || got[0].MsgType() != openflow.TypePacketOut {
		t.Fatalf("got %s", dump(got))
	}
	f, ok := got[1].(*openflow.FlowMod)
	if !ok || f.IdleTimeout != 30 || f.HardTimeout != 90 {
		t.Fatalf("flow mod %s", dump(got[1:]))
	}
	permanent := NewReactive(ReactiveConfig{IdleTimeout: -1})
	if permanent.idle != 0 {
		t.Errorf("negative idle timeout gave %d, want 0 (permanent)", permanent.idle)
	}
}

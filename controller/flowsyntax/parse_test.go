package flowsyntax

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/pseudocong/pseudocong/openflow"
)

// match builds an expected match from the wildcard-all default.
func match(edit func(m *openflow.Match)) openflow.Match {
	m := openflow.MatchAll()
	edit(&m)
	return m
}

func TestParseFlow(t *testing.T) {
	tests := []struct {
		in   string
		want Flow
	}{
		{
			in: "priority=100,tcp,nw_dst=10.0.0.2,tp_dst=80,actions=output:2",
			want: Flow{Priority: 100, Match: match(func(m *openflow.Match) {
				m.Wildcards &^= openflow.WildcardDlType | openflow.WildcardNwProto | openflow.WildcardTpDst
				m.DlType, m.NwProto, m.TpDst = 0x0800, 6, 80
				m.NwDst = 0x0a000002
				m.SetNwDstPrefixLen(32)
			}), Actions: []openflow.Action{openflow.ActionOutput{Port: 2}}},
		},
		{
			// Defaults: priority 32768, blanks as separators, bare port number.
			in: "in_port=1 dl_src=00:00:00:00:00:01 actions=2",
			want: Flow{Priority: 0x8000, Match: match(func(m *openflow.Match) {
				m.Wildcards &^= openflow.WildcardInPort | openflow.WildcardDlSrc
				m.InPort, m.DlSrc = 1, [6]byte{0, 0, 0, 0, 0, 1}
			}), Actions: []openflow.Action{openflow.ActionOutput{Port: 2}}},
		},
		{
			in: "cookie=0x10,idle_timeout=5,hard_timeout=60,priority=7,ip,nw_src=10.1.2.3/255.255.0.0,nw_tos=16,send_flow_rem,actions=drop",
			want: Flow{Cookie: 16, IdleTimeout: 5, HardTimeout: 60, Priority: 7, Flags: openflow.FlowModFlagSendFlowRem,
				Match: match(func(m *openflow.Match) {
					m.Wildcards &^= openflow.WildcardDlType | openflow.WildcardNwTos
					m.DlType, m.NwTos = 0x0800, 16
					m.NwSrc = 0x0a010000 // masked to the prefix
					m.SetNwSrcPrefixLen(16)
				})},
		},
		{
			in: "icmp,icmp_type=8,icmp_code=0,dl_vlan=10,dl_vlan_pcp=3,dl_dst=ff:ff:ff:ff:ff:ff,actions=mod_vlan_vid:20,mod_vlan_pcp:1,strip_vlan,mod_dl_src:0a:0b:0c:0d:0e:0f,mod_dl_dst:00:00:00:00:00:02,mod_nw_src:1.2.3.4,mod_nw_dst:5.6.7.8,mod_nw_tos:8,mod_tp_src:1000,mod_tp_dst:2000,enqueue:3:7,enqueue(LOCAL,1),normal,flood,all,controller,controller:128,local,in_port,output:IN_PORT",
			want: Flow{Priority: 0x8000, Match: match(func(m *openflow.Match) {
				m.Wildcards &^= openflow.WildcardDlType | openflow.WildcardNwProto | openflow.WildcardTpSrc | openflow.WildcardTpDst |
					openflow.WildcardDlVlan | openflow.WildcardDlVlanPcp | openflow.WildcardDlDst
				m.DlType, m.NwProto, m.TpSrc, m.TpDst = 0x0800, 1, 8, 0
				m.DlVlan, m.DlVlanPcp = 10, 3
				m.DlDst = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
			}), Actions: []openflow.Action{
				openflow.ActionSetVlanVID{VlanVID: 20}, openflow.ActionSetVlanPCP{VlanPCP: 1}, openflow.ActionStripVlan{},
				openflow.ActionSetDlSrc{Addr: [6]byte{10, 11, 12, 13, 14, 15}}, openflow.ActionSetDlDst{Addr: [6]byte{0, 0, 0, 0, 0, 2}},
				openflow.ActionSetNwSrc{Addr: 0x01020304}, openflow.ActionSetNwDst{Addr: 0x05060708}, openflow.ActionSetNwTos{Tos: 8},
				openflow.ActionSetTpSrc{Port: 1000}, openflow.ActionSetTpDst{Port: 2000},
				openflow.ActionEnqueue{Port: 3, QueueID: 7}, openflow.ActionEnqueue{Port: openflow.PortLocal, QueueID: 1},
				openflow.ActionOutput{Port: openflow.PortNormal}, openflow.ActionOutput{Port: openflow.PortFlood},
				openflow.ActionOutput{Port: openflow.PortAll}, openflow.ActionOutput{Port: openflow.PortController, MaxLen: 0xffff},
				openflow.ActionOutput{Port: openflow.PortController, MaxLen: 128}, openflow.ActionOutput{Port: openflow.PortLocal},
				openflow.ActionOutput{Port: openflow.PortInPort}, openflow.ActionOutput{Port: openflow.PortInPort},
			}},
		},
		{
			in: "arp,dl_type=0x0806,nw_dst=192.168.0.0/16,in_port=LOCAL,table=0,check_overlap,actions=FLOOD",
			want: Flow{Priority: 0x8000, Flags: openflow.FlowModFlagCheckOverlap, Match: match(func(m *openflow.Match) {
				m.Wildcards &^= openflow.WildcardDlType | openflow.WildcardInPort
				m.DlType, m.InPort = 0x0806, openflow.PortLocal
				m.NwDst = 0xc0a80000
				m.SetNwDstPrefixLen(16)
			}), Actions: []openflow.Action{openflow.ActionOutput{Port: openflow.PortFlood}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseFlow(tt.in)
			if err != nil {
				t.Fatalf("ParseFlow: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseFlow(%q)\n got  %+v\n want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseFlowErrors(t *testing.T) {
	tests := []struct {
		in        string
		wantToken string
		wantMsg   string
	}{
		{"priority=1,tcp", "priority=1,tcp", "missing actions"},
		{"priority=70000,actions=drop", "priority=70000", "out of range"},
		{"frobnicate=1,actions=drop", "frobnicate=1", "unknown field"},
		{"tcpp,actions=drop", "tcpp", "unknown keyword"},
		{"nw_dst=10.0.0.1,actions=drop", "nw_dst=10.0.0.1", "needs dl_type"},
		{"ip,tp_dst=80,actions=drop", "tp_dst=80", "needs an IPv4 protocol"},
		{"tcp,udp,actions=drop", "udp", "given twice"},
		{"ip,nw_dst=10.0.0.300,actions=drop", "nw_dst=10.0.0.300", "bad IPv4"},
		{"ip,nw_dst=10.0.0.0/255.0.255.0,actions=drop", "nw_dst=10.0.0.0/255.0.255.0", "not a CIDR"},
		{"dl_src=00:00:00:00:00,actions=drop", "dl_src=00:00:00:00:00", "bad Ethernet"},
		{"dl_src=00:00:00:00:00:01/ff:ff:ff:ff:ff:00,actions=drop", "dl_src=00:00:00:00:00:01/ff:ff:ff:ff:ff:00", "masks"},
		{"dl_vlan=5000,actions=drop", "dl_vlan=5000", "VLAN id"},
		{"ip,nw_tos=3,actions=drop", "nw_tos=3", "ECN"},
		{"table=1,actions=drop", "table=1", "single table"},
		{"in_port=,actions=drop", "in_port=", "empty value"},
		{"actions=output:2,drop", "drop", "only action"},
		{"actions=", "actions=", "empty action list"},
		{"actions=explode", "explode", "unknown action"},
		{"actions=output:70000", "output:70000", "bad port"},
		{"actions=enqueue:1", "enqueue:1", "PORT:QUEUE"},
		{"actions=mod_vlan_vid:4096", "mod_vlan_vid:4096", "VLAN id"},
		{"actions=enqueue(1,2", "enqueue(1,2", "unbalanced"},
		{"actions=0", "0", "output port"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := ParseFlow(tt.in)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("ParseFlow(%q) error = %v, want *Error", tt.in, err)
			}
			if e.Token != tt.wantToken || !strings.Contains(e.Msg, tt.wantMsg) {
				t.Errorf("ParseFlow(%q) = token %q msg %q; want token %q msg containing %q", tt.in, e.Token, e.Msg, tt.wantToken, tt.wantMsg)
			}
		})
	}
}

func TestParseFileLinesAndComments(t *testing.T) {
	const rules = `# proactive rules
priority=100,tcp,nw_dst=10.0.0.2,tp_dst=80,actions=output:2

   # indented comment
priority=10,arp,actions=flood
`
	flows, err := Parse(strings.NewReader(rules))
	if err != nil {
		t.Fatal(err)
	}
	if len(flows) != 2 || flows[0].Priority != 100 || flows[1].Priority != 10 {
		t.Fatalf("got %d flows %+v", len(flows), flows)
	}

	bad := rules + "\npriority=5,ip,nw_src=1.2.3,actions=drop\n"
	_, err = Parse(strings.NewReader(bad))
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("want *Error, got %v", err)
	}
	if e.Line != 7 || e.Token != "nw_src=1.2.3" {
		t.Errorf("error at line %d token %q, want line 7 token nw_src=1.2.3 (%v)", e.Line, e.Token, err)
	}
	if !strings.HasPrefix(err.Error(), "line 7: ") {
		t.Errorf("error text %q should start with the line number", err)
	}
}

// TestRoundTripMatchString checks that ParseFlow reads back what
// Flow.String (and so openflow.Match.String and FormatActions) writes, for
// random flows.
func TestRoundTripMatchString(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		f := randomFlow(rng)
		s := f.String()
		got, err := ParseFlow(s)
		if err != nil {
			t.Fatalf("flow %d: ParseFlow(%q): %v", i, s, err)
		}
		if !reflect.DeepEqual(got, f) {
			t.Fatalf("flow %d: round trip of %q\n got  %+v\n want %+v", i, s, got, f)
		}
		// The match part alone, as the codec formats it, parses to the same match.
		g2, err := ParseFlow(f.Match.String() + ",actions=drop")
		if err != nil || g2.Match != f.Match {
			t.Fatalf("flow %d: Match.String %q did not round-trip: %v", i, f.Match.String(), err)
		}
	}
}

func randomFlow(rng *rand.Rand) Flow {
	m := openflow.MatchAll()
	pick := func() bool { return rng.IntN(2) == 0 }
	if pick() {
		m.Wildcards &^= openflow.WildcardInPort
		m.InPort = uint16(1 + rng.IntN(48))
	}
	if pick() {
		m.Wildcards &^= openflow.WildcardDlSrc
		m.DlSrc = [6]byte{byte(rng.Uint32()), 1, 2, 3, 4, byte(rng.Uint32())}
	}
	if pick() {
		m.Wildcards &^= openflow.WildcardDlDst
		m.DlDst = [6]byte{2, byte(rng.Uint32()), 0, 0, 9, byte(rng.Uint32())}
	}
	if pick() {
		m.Wildcards &^= openflow.WildcardDlVlan
		m.DlVlan = uint16(rng.IntN(4096))
	}
	if pick() {
		m.Wildcards &^= openflow.WildcardDlVlanPcp
		m.DlVlanPcp = uint8(rng.IntN(8))
	}
	switch rng.IntN(4) {
	case 0: // no dl_type
	case 1:
		m.Wildcards &^= openflow.WildcardDlType
		m.DlType = 0x88cc
	case 2:
		m.Wildcards &^= openflow.WildcardDlType
		m.DlType = 0x0806
		if pick() {
			m.NwSrc = rng.Uint32()
			m.SetNwSrcPrefixLen(32)
		}
	case 3:
		m.Wildcards &^= openflow.WildcardDlType
		m.DlType = 0x0800
		if pick() {
			n := 1 + rng.IntN(32)
			m.NwDst = rng.Uint32() & prefixMask(n)
			m.SetNwDstPrefixLen(n)
		}
		if pick() {
			m.Wildcards &^= openflow.WildcardNwTos
			m.NwTos = uint8(rng.IntN(64)) << 2
		}
		if pick() {
			m.Wildcards &^= openflow.WildcardNwProto
			m.NwProto = []uint8{1, 6, 17, 132, 47}[rng.IntN(5)]
			if m.NwProto != 47 && pick() {
				m.Wildcards &^= openflow.WildcardTpSrc | openflow.WildcardTpDst
				m.TpSrc, m.TpDst = uint16(rng.IntN(256)), uint16(rng.IntN(256))
			}
		}
	}
	f := Flow{Match: m, Priority: uint16(rng.IntN(65536)), IdleTimeout: uint16(rng.IntN(3)), Cookie: uint64(rng.IntN(3)) << 40}
	actions := []openflow.Action{
		openflow.ActionOutput{Port: uint16(1 + rng.IntN(100))},
		openflow.ActionOutput{Port: openflow.PortController, MaxLen: uint16(rng.IntN(65536))},
		openflow.ActionOutput{Port: openflow.PortFlood},
		openflow.ActionSetVlanVID{VlanVID: uint16(rng.IntN(4096))},
		openflow.ActionStripVlan{},
		openflow.ActionSetDlDst{Addr: [6]byte{1, 2, 3, 4, 5, byte(rng.Uint32())}},
		openflow.ActionSetNwSrc{Addr: rng.Uint32()},
		openflow.ActionSetTpDst{Port: uint16(rng.Uint32())},
		openflow.ActionEnqueue{Port: uint16(1 + rng.IntN(10)), QueueID: rng.Uint32()},
	}
	for range rng.IntN(4) {
		f.Actions = append(f.Actions, actions[rng.IntN(len(actions))])
	}
	return f
}

func TestFlowModCarriesFlow(t *testing.T) {
	f, err := ParseFlow("priority=9,idle_timeout=3,cookie=5,udp,tp_dst=53,actions=output:4")
	if err != nil {
		t.Fatal(err)
	}
	fm := f.FlowMod(42)
	if fm.Xid != 42 || fm.Command != openflow.FlowModAdd || fm.Priority != 9 || fm.IdleTimeout != 3 ||
		fm.Cookie != 5 || fm.BufferID != openflow.NoBuffer || fm.OutPort != openflow.PortNone || fm.Match != f.Match {
		t.Fatalf("FlowMod = %+v", fm)
	}
	b, err := openflow.Marshal(fm)
	if err != nil {
		t.Fatal(err)
	}
	back, err := openflow.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := back.(*openflow.FlowMod); !reflect.DeepEqual(got.Actions, f.Actions) || got.Match != f.Match {
		t.Fatalf("decoded %+v", got)
	}
}

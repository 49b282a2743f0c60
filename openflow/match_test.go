package openflow_test

import (
	"testing"

	of "github.com/pseudocong/pseudocong/openflow"
)

func TestMatchPrefixLen(t *testing.T) {
	tests := []struct {
		name             string
		wildcards        uint32
		wantSrc, wantDst int
		wantSrcMask      uint32
		wantDstMask      uint32
	}{
		{"exact", 0, 32, 32, 0xffffffff, 0xffffffff},
		{"all", of.WildcardAll, 0, 0, 0, 0},
		{"canonical all", of.WildcardNwSrcAll | of.WildcardNwDstAll, 0, 0, 0, 0},
		{"src /24 dst /16", 8<<of.WildcardNwSrcShift | 16<<of.WildcardNwDstShift, 24, 16, 0xffffff00, 0xffff0000},
		{"src 33 ignored bits", 33 << of.WildcardNwSrcShift, 0, 32, 0, 0xffffffff},
		{"dst 31 ignored bits", 31 << of.WildcardNwDstShift, 32, 1, 0xffffffff, 0x80000000},
	}
	for _, tc := range tests {
		m := of.Match{Wildcards: tc.wildcards}
		if got := m.NwSrcPrefixLen(); got != tc.wantSrc {
			t.Errorf("%s: NwSrcPrefixLen = %d, want %d", tc.name, got, tc.wantSrc)
		}
		if got := m.NwDstPrefixLen(); got != tc.wantDst {
			t.Errorf("%s: NwDstPrefixLen = %d, want %d", tc.name, got, tc.wantDst)
		}
		if got := m.NwSrcMask(); got != tc.wantSrcMask {
			t.Errorf("%s: NwSrcMask = %#x, want %#x", tc.name, got, tc.wantSrcMask)
		}
		if got := m.NwDstMask(); got != tc.wantDstMask {
			t.Errorf("%s: NwDstMask = %#x, want %#x", tc.name, got, tc.wantDstMask)
		}
	}
}

func TestMatchSetPrefixLen(t *testing.T) {
	m := of.MatchAll()
	m.SetNwSrcPrefixLen(24)
	m.SetNwDstPrefixLen(32)
	if m.NwSrcPrefixLen() != 24 || m.NwDstPrefixLen() != 32 {
		t.Fatalf("got /%d /%d", m.NwSrcPrefixLen(), m.NwDstPrefixLen())
	}
	// Other wildcard bits are untouched.
	if other := m.Wildcards &^ (of.WildcardNwSrcMask | of.WildcardNwDstMask); other != of.WildcardAll&^(of.WildcardNwSrcMask|of.WildcardNwDstMask) {
		t.Errorf("other bits changed: %#x", other)
	}
	if got := (m.Wildcards & of.WildcardNwSrcMask) >> of.WildcardNwSrcShift; got != 8 {
		t.Errorf("nw_src field = %d, want 8", got)
	}
	m.SetNwSrcPrefixLen(0)
	if got := m.Wildcards & of.WildcardNwSrcMask; got != of.WildcardNwSrcAll {
		t.Errorf("prefix 0 field = %#x, want OFPFW_NW_SRC_ALL %#x", got, of.WildcardNwSrcAll)
	}
	m.SetNwDstPrefixLen(40) // clamped
	if m.NwDstPrefixLen() != 32 {
		t.Errorf("clamp: /%d", m.NwDstPrefixLen())
	}
	m.SetNwDstPrefixLen(-3)
	if m.NwDstPrefixLen() != 0 {
		t.Errorf("clamp: /%d", m.NwDstPrefixLen())
	}
}

func TestWildcardConstants(t *testing.T) {
	// Values from openflow.h.
	tests := []struct {
		got, want uint32
	}{
		{of.WildcardInPort, 1}, {of.WildcardDlVlan, 2}, {of.WildcardDlSrc, 4}, {of.WildcardDlDst, 8},
		{of.WildcardDlType, 16}, {of.WildcardNwProto, 32}, {of.WildcardTpSrc, 64}, {of.WildcardTpDst, 128},
		{of.WildcardNwSrcMask, 0x3f00}, {of.WildcardNwSrcAll, 0x2000}, {of.WildcardNwDstMask, 0xfc000},
		{of.WildcardNwDstAll, 0x80000}, {of.WildcardDlVlanPcp, 0x100000}, {of.WildcardNwTos, 0x200000},
		{of.WildcardAll, 0x3fffff},
	}
	for i, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("#%d: %#x, want %#x", i, tc.got, tc.want)
		}
	}
}

func TestMatchString(t *testing.T) {
	exact := func(w uint32) uint32 { return of.WildcardAll &^ w }
	ipExactDst := of.WildcardAll &^ (of.WildcardDlType | of.WildcardNwProto | of.WildcardTpDst | of.WildcardNwDstMask)
	tests := []struct {
		name string
		m    of.Match
		want string
	}{
		{"all", of.MatchAll(), ""},
		{"brief example", of.Match{Wildcards: ipExactDst &^ (of.WildcardInPort | of.WildcardDlSrc), InPort: 1,
			DlSrc: [6]byte{0, 0, 0, 0, 0, 1}, DlType: 0x0800, NwProto: 6, NwDst: 0x0a000002, TpDst: 80},
			"in_port=1,dl_src=00:00:00:00:00:01,tcp,nw_dst=10.0.0.2,tp_dst=80"},
		{"udp", of.Match{Wildcards: ipExactDst, DlType: 0x0800, NwProto: 17, NwDst: 0x0a000002, TpDst: 53},
			"udp,nw_dst=10.0.0.2,tp_dst=53"},
		{"icmp", of.Match{Wildcards: exact(of.WildcardDlType | of.WildcardNwProto | of.WildcardTpSrc | of.WildcardTpDst),
			DlType: 0x0800, NwProto: 1, TpSrc: 8}, "icmp,icmp_type=8,icmp_code=0"},
		{"ip with other proto", of.Match{Wildcards: exact(of.WildcardDlType | of.WildcardNwProto), DlType: 0x0800, NwProto: 89},
			"ip,nw_proto=89"},
		{"ip prefixes", of.Match{Wildcards: exact(of.WildcardDlType|of.WildcardNwSrcMask|of.WildcardNwDstMask) | 8<<of.WildcardNwSrcShift | 16<<of.WildcardNwDstShift,
			DlType: 0x0800, NwSrc: 0x0a000100, NwDst: 0xc0a80000}, "ip,nw_src=10.0.1.0/24,nw_dst=192.168.0.0/16"},
		{"arp", of.Match{Wildcards: exact(of.WildcardDlType | of.WildcardInPort), InPort: of.PortLocal, DlType: 0x0806},
			"in_port=LOCAL,arp"},
		{"other ethertype", of.Match{Wildcards: exact(of.WildcardDlType), DlType: 0x88cc}, "dl_type=0x88cc"},
		{"vlan", of.Match{Wildcards: exact(of.WildcardDlVlan | of.WildcardDlVlanPcp | of.WildcardDlDst),
			DlVlan: 10, DlVlanPcp: 3, DlDst: [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
			"dl_vlan=10,dl_vlan_pcp=3,dl_dst=ff:ff:ff:ff:ff:ff"},
		{"no vlan", of.Match{Wildcards: exact(of.WildcardDlVlan), DlVlan: of.VlanNone}, "dl_vlan=65535"},
		{"tos and ports without dl_type", of.Match{Wildcards: exact(of.WildcardNwTos | of.WildcardTpSrc), NwTos: 0xb8, TpSrc: 1234},
			"nw_tos=184,tp_src=1234"},
		{"exact", of.Match{InPort: 3, DlSrc: [6]byte{0, 0, 0, 0, 0, 1}, DlDst: [6]byte{0, 0, 0, 0, 0, 2}, DlVlan: of.VlanNone,
			DlType: 0x0800, NwProto: 6, NwSrc: 0x0a000001, NwDst: 0x0a000002, TpSrc: 40000, TpDst: 80},
			"in_port=3,dl_vlan=65535,dl_vlan_pcp=0,dl_src=00:00:00:00:00:01,dl_dst=00:00:00:00:00:02,tcp,nw_src=10.0.0.1,nw_dst=10.0.0.2,nw_tos=0,tp_src=40000,tp_dst=80"},
	}
	for _, tc := range tests {
		if got := tc.m.String(); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

func TestActionStrings(t *testing.T) {
	tests := []struct {
		a    of.Action
		want string
	}{
		{of.ActionOutput{Port: 2}, "output:2"},
		{of.ActionOutput{Port: of.PortController, MaxLen: 128}, "CONTROLLER:128"},
		{of.ActionOutput{Port: of.PortFlood}, "FLOOD"},
		{of.ActionOutput{Port: of.PortInPort}, "IN_PORT"},
		{of.ActionOutput{Port: of.PortNormal}, "NORMAL"},
		{of.ActionOutput{Port: of.PortAll}, "ALL"},
		{of.ActionOutput{Port: of.PortLocal}, "LOCAL"},
		{of.ActionOutput{Port: of.PortTable}, "TABLE"},
		{of.ActionSetVlanVID{VlanVID: 10}, "mod_vlan_vid:10"},
		{of.ActionSetVlanPCP{VlanPCP: 3}, "mod_vlan_pcp:3"},
		{of.ActionStripVlan{}, "strip_vlan"},
		{of.ActionSetDlSrc{Addr: [6]byte{0, 0x11, 0x22, 0x33, 0x44, 0x55}}, "mod_dl_src:00:11:22:33:44:55"},
		{of.ActionSetDlDst{Addr: [6]byte{0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff}}, "mod_dl_dst:aa:bb:cc:dd:ee:ff"},
		{of.ActionSetNwSrc{Addr: 0x0a000001}, "mod_nw_src:10.0.0.1"},
		{of.ActionSetNwDst{Addr: 0xc0a80102}, "mod_nw_dst:192.168.1.2"},
		{of.ActionSetNwTos{Tos: 184}, "mod_nw_tos:184"},
		{of.ActionSetTpSrc{Port: 8080}, "mod_tp_src:8080"},
		{of.ActionSetTpDst{Port: 443}, "mod_tp_dst:443"},
		{of.ActionEnqueue{Port: 1, QueueID: 2}, "enqueue:1:2"},
		{of.ActionVendor{Vendor: 0x2320, Data: []byte{1, 2}}, "vendor:0x2320,data:0x0102"},
	}
	for _, tc := range tests {
		if got := tc.a.String(); got != tc.want {
			t.Errorf("%T: got %q, want %q", tc.a, got, tc.want)
		}
	}
	if got := of.FormatActions(nil); got != "drop" {
		t.Errorf("FormatActions(nil) = %q", got)
	}
	if got := of.FormatActions([]of.Action{of.ActionStripVlan{}, of.ActionOutput{Port: 1}}); got != "strip_vlan,output:1" {
		t.Errorf("FormatActions = %q", got)
	}
}

// TestActionVendorPadding: vendor data that is not a whole number of words
// is zero padded on the wire.
func TestActionVendorPadding(t *testing.T) {
	a := of.ActionVendor{Vendor: 1, Data: []byte{9, 9, 9}}
	if a.Len() != 16 {
		t.Fatalf("Len %d, want 16", a.Len())
	}
	got := a.AppendAction(nil)
	want := []byte{0xff, 0xff, 0, 16, 0, 0, 0, 1, 9, 9, 9, 0, 0, 0, 0, 0}
	if string(got) != string(want) {
		t.Fatalf("got % x, want % x", got, want)
	}
}

func TestFlowModString(t *testing.T) {
	m := &of.FlowMod{Priority: 100, IdleTimeout: 10, Match: of.Match{
		Wildcards: of.WildcardAll &^ (of.WildcardDlType | of.WildcardNwProto | of.WildcardTpDst | of.WildcardNwDstMask),
		DlType:    0x0800, NwProto: 6, NwDst: 0x0a000002, TpDst: 80},
		Actions: []of.Action{of.ActionOutput{Port: 2}}}
	if got, want := m.String(), "idle_timeout=10,priority=100,tcp,nw_dst=10.0.0.2,tp_dst=80,actions=output:2"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	del := &of.FlowMod{Match: of.MatchAll(), Cookie: 0xab, HardTimeout: 5}
	if got, want := del.String(), "cookie=0xab,hard_timeout=5,priority=0,actions=drop"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	fs := &of.FlowStats{Priority: 7, Match: of.MatchAll(), Actions: []of.Action{of.ActionOutput{Port: of.PortFlood}}}
	if got, want := fs.String(), "priority=7,actions=FLOOD"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

package openflow_test

import (
	"bytes"
	"encoding/hex"
	"reflect"
	"testing"

	of "github.com/pseudocong/pseudocong/openflow"
)

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Expected values of the golden vectors, written from the generator's
// parameters (testdata/golden_gen.py), not from our encoder.
var (
	goldenActions = map[string]of.Action{
		"output":      of.ActionOutput{Port: 2},
		"output_ctrl": of.ActionOutput{Port: of.PortController, MaxLen: 0xffff},
		"vlan_vid":    of.ActionSetVlanVID{VlanVID: 0x123},
		"vlan_pcp":    of.ActionSetVlanPCP{VlanPCP: 5},
		"strip":       of.ActionStripVlan{},
		"dl_src":      of.ActionSetDlSrc{Addr: [6]byte{0, 0x11, 0x22, 0x33, 0x44, 0x55}},
		"dl_dst":      of.ActionSetDlDst{Addr: [6]byte{0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff}},
		"nw_src":      of.ActionSetNwSrc{Addr: 0x0a000001},
		"nw_dst":      of.ActionSetNwDst{Addr: 0xc0a80102},
		"nw_tos":      of.ActionSetNwTos{Tos: 0xb8},
		"tp_src":      of.ActionSetTpSrc{Port: 8080},
		"tp_dst":      of.ActionSetTpDst{Port: 443},
		"enqueue":     of.ActionEnqueue{Port: 3, QueueID: 7},
		"vendor":      of.ActionVendor{Vendor: 0x2320, Data: []byte{0, 1, 2, 3, 4, 5, 6, 7}},
	}
	allActionNames = []string{"output", "output_ctrl", "vlan_vid", "vlan_pcp", "strip", "dl_src", "dl_dst",
		"nw_src", "nw_dst", "nw_tos", "tp_src", "tp_dst", "enqueue", "vendor"}

	matchTCP = of.Match{
		Wildcards: of.WildcardAll&^(of.WildcardInPort|of.WildcardDlType|of.WildcardNwProto|of.WildcardTpDst|
			of.WildcardNwSrcMask|of.WildcardNwDstMask) | 8<<of.WildcardNwSrcShift,
		InPort: 1, DlType: 0x0800, NwProto: 6, NwSrc: 0x0a000000, NwDst: 0x0a000002, TpDst: 80,
	}
	matchExact = of.Match{
		InPort: 3, DlSrc: [6]byte{0, 0, 0, 0, 0, 1}, DlDst: [6]byte{0, 0, 0, 0, 0, 2}, DlVlan: of.VlanNone,
		DlType: 0x0800, NwProto: 1, NwSrc: 0x0a000001, NwDst: 0x0a000002, TpSrc: 8,
	}
	matchAll = of.MatchAll()

	port1 = of.PhyPort{PortNo: 1, HWAddr: [6]byte{2, 0, 0, 0, 0, 1}, Name: "eth1",
		Config: of.PortConfigPortDown, State: of.PortStateSTPForward,
		Curr:       of.PortFeature1GbFD | of.PortFeatureCopper | of.PortFeatureAutoneg,
		Advertised: of.PortFeature1GbFD | of.PortFeatureCopper | of.PortFeatureAutoneg,
		Supported: of.PortFeature1GbFD | of.PortFeatureCopper | of.PortFeatureAutoneg | of.PortFeature10MbHD |
			of.PortFeature10MbFD | of.PortFeature100MbHD | of.PortFeature100MbFD}
	portLocal = of.PhyPort{PortNo: of.PortLocal, HWAddr: [6]byte{2, 0, 0, 0, 0, 0xfe}, Name: "br0",
		Config: of.PortConfigPortDown, State: of.PortStateLinkDown}

	arpFrame = []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 1, 0x08, 0x06, 0, 1, 8, 0, 6, 4, 0, 1,
		0, 0, 0, 0, 0, 1, 10, 0, 0, 1, 0, 0, 0, 0, 0, 0, 10, 0, 0, 2}
)

func allActions() []of.Action {
	var acts []of.Action
	for _, n := range allActionNames {
		acts = append(acts, goldenActions[n])
	}
	return acts
}

type goldenMsg struct {
	name string
	xid  uint32
	want of.Message
}

func goldenMessages() []goldenMsg {
	return []goldenMsg{
		{"hello", 1, &of.Hello{}},
		{"hello_elements", 2, &of.Hello{Elements: []byte{0, 1, 0, 8, 0, 0, 0, 0x12}}},
		{"error", 3, &of.ErrorMsg{Type: of.ErrorTypeBadRequest, Code: uint16(of.BadRequestBadLen),
			Data: []byte{1, 14, 0, 72, 0, 0, 0, 9}}},
		{"echo_request", 4, &of.EchoRequest{Data: []byte{0xde, 0xad, 0xbe, 0xef}}},
		{"echo_reply", 5, &of.EchoReply{}},
		{"vendor", 6, &of.Vendor{Vendor: 0x2320, Data: []byte{0, 0, 0, 11}}},
		{"features_request", 7, &of.FeaturesRequest{}},
		{"features_reply", 8, &of.FeaturesReply{DatapathID: 42, NBuffers: 256, NTables: 254,
			Capabilities: of.CapFlowStats | of.CapTableStats | of.CapPortStats | of.CapQueueStats | of.CapARPMatchIP,
			Actions:      0xfff, Ports: []of.PhyPort{port1, portLocal}}},
		{"get_config_request", 9, &of.GetConfigRequest{}},
		{"get_config_reply", 10, &of.GetConfigReply{Flags: of.ConfigFragNormal, MissSendLen: of.DefaultMissSendLen}},
		{"set_config", 11, &of.SetConfig{Flags: of.ConfigFragReasm, MissSendLen: 0xffff}},
		{"packet_in", 0, &of.PacketIn{BufferID: 0x102, TotalLen: 60, InPort: 3, Reason: of.PacketInReasonNoMatch, Data: arpFrame}},
		{"flow_removed", 12, &of.FlowRemoved{Match: matchTCP, Cookie: 0x1122334455667788, Priority: 100,
			Reason: of.FlowRemovedDelete, DurationSec: 30, DurationNsec: 500000000, IdleTimeout: 10, PacketCount: 7, ByteCount: 980}},
		{"port_status", 13, &of.PortStatus{Reason: of.PortReasonModify, Desc: port1}},
		{"packet_out", 14, &of.PacketOut{BufferID: of.NoBuffer, InPort: 1,
			Actions: []of.Action{of.ActionOutput{Port: 2}, of.ActionStripVlan{}}, Data: arpFrame}},
		{"packet_out_buffered", 15, &of.PacketOut{BufferID: 0x102, InPort: 3, Actions: []of.Action{of.ActionOutput{Port: 2}}}},
		{"flow_mod", 16, &of.FlowMod{Match: matchTCP, Cookie: 0xabcdef, Command: of.FlowModAdd, IdleTimeout: 10,
			HardTimeout: 30, Priority: 100, BufferID: of.NoBuffer, OutPort: of.PortNone, Flags: of.FlowModFlagSendFlowRem,
			Actions: []of.Action{of.ActionOutput{Port: 2}}}},
		{"flow_mod_all_actions", 17, &of.FlowMod{Match: matchExact, Command: of.FlowModModify, Priority: of.DefaultPriority,
			BufferID: 0x102, OutPort: of.PortNone, Flags: of.FlowModFlagCheckOverlap | of.FlowModFlagEmerg, Actions: allActions()}},
		{"flow_mod_delete", 18, &of.FlowMod{Match: matchAll, Command: of.FlowModDelete, BufferID: of.NoBuffer, OutPort: of.PortNone}},
		{"port_mod", 19, &of.PortMod{PortNo: 1, HWAddr: [6]byte{2, 0, 0, 0, 0, 1},
			Config: of.PortConfigPortDown | of.PortConfigNoFlood, Mask: of.PortConfigPortDown | of.PortConfigNoFlood,
			Advertise: of.PortFeature1GbFD | of.PortFeatureCopper | of.PortFeatureAutoneg}},
		{"stats_request_desc", 20, &of.StatsRequest{Body: of.DescStatsRequest{}}},
		{"stats_request_flow", 21, &of.StatsRequest{Body: of.FlowStatsRequest{Match: matchAll, TableID: of.TableAll, OutPort: of.PortNone}}},
		{"stats_request_aggregate", 22, &of.StatsRequest{Body: of.AggregateStatsRequest{Match: matchTCP, TableID: 0, OutPort: 2}}},
		{"stats_request_table", 23, &of.StatsRequest{Body: of.TableStatsRequest{}}},
		{"stats_request_port", 24, &of.StatsRequest{Body: of.PortStatsRequest{PortNo: of.PortNone}}},
		{"stats_request_queue", 25, &of.StatsRequest{Body: of.QueueStatsRequest{PortNo: of.PortAll, QueueID: of.QueueAll}}},
		{"stats_request_vendor", 26, &of.StatsRequest{Body: of.VendorStatsRequest{Vendor: 0x2320, Data: []byte{0, 0, 0, 1}}}},
		{"stats_reply_desc", 27, &of.StatsReply{Body: of.DescStats{MfrDesc: "Nicira, Inc.", HwDesc: "Open vSwitch",
			SwDesc: "3.1.0", SerialNum: "None", DpDesc: "br0"}}},
		{"stats_reply_flow", 28, &of.StatsReply{Flags: of.StatsReplyMore, Body: of.FlowStatsReply{
			{TableID: 0, Match: matchTCP, DurationSec: 12, DurationNsec: 345, Priority: 100, IdleTimeout: 10, HardTimeout: 30,
				Cookie: 0xabcdef, PacketCount: 5, ByteCount: 370, Actions: []of.Action{of.ActionOutput{Port: 2}}},
			{TableID: 0, Match: matchAll, DurationSec: 1, DurationNsec: 2},
		}}},
		{"stats_reply_flow_empty", 29, &of.StatsReply{Body: of.FlowStatsReply(nil)}},
		{"stats_reply_aggregate", 30, &of.StatsReply{Body: of.AggregateStats{PacketCount: 1000, ByteCount: 64000, FlowCount: 12}}},
		{"stats_reply_table", 31, &of.StatsReply{Body: of.TableStatsReply{{TableID: 0, Name: "classifier",
			Wildcards: of.WildcardAll, MaxEntries: 1000000, ActiveCount: 12, LookupCount: 5000, MatchedCount: 4900}}}},
		{"stats_reply_port", 32, &of.StatsReply{Body: of.PortStatsReply{
			{PortNo: 1, RxPackets: 1, TxPackets: 2, RxBytes: 3, TxBytes: 4, RxDropped: 5, TxDropped: 6, RxErrors: 7,
				TxErrors: 8, RxFrameErr: 9, RxOverErr: 10, RxCRCErr: 11, Collisions: 12},
			{PortNo: of.PortLocal, RxPackets: ^uint64(0), TxPackets: ^uint64(0), RxBytes: ^uint64(0), TxBytes: ^uint64(0),
				RxDropped: ^uint64(0), TxDropped: ^uint64(0), RxErrors: ^uint64(0), TxErrors: ^uint64(0),
				RxFrameErr: ^uint64(0), RxOverErr: ^uint64(0), RxCRCErr: ^uint64(0), Collisions: ^uint64(0)},
		}}},
		{"stats_reply_queue", 33, &of.StatsReply{Body: of.QueueStatsReply{{PortNo: 1, QueueID: 7, TxBytes: 1500, TxPackets: 1}}}},
		{"stats_reply_vendor", 34, &of.StatsReply{Body: of.VendorStatsReply{Vendor: 0x2320, Data: []byte{0, 1, 2, 3, 4, 5, 6, 7}}}},
		{"barrier_request", 35, &of.BarrierRequest{}},
		{"barrier_reply", 35, &of.BarrierReply{}},
		{"queue_get_config_request", 36, &of.QueueGetConfigRequest{Port: 1}},
		{"queue_get_config_reply", 37, &of.QueueGetConfigReply{Port: 1, Queues: []of.PacketQueue{
			{QueueID: 7, Properties: []of.QueueProperty{{Property: of.QueuePropMinRate, Rate: 500}}},
			{QueueID: 8, Properties: []of.QueueProperty{{Property: of.QueuePropNone}}},
			{QueueID: 9},
		}}},
	}
}

// TestGoldenMessages decodes every golden vector into exactly the expected
// struct and encodes the expected struct into exactly the golden bytes.
func TestGoldenMessages(t *testing.T) {
	seenTypes := map[of.Type]bool{}
	for _, tc := range goldenMessages() {
		t.Run(tc.name, func(t *testing.T) {
			raw := mustHex(t, goldenMessageHex[tc.name])
			if len(raw) == 0 {
				t.Fatal("no golden bytes")
			}
			*tc.want.Hdr() = of.Header{Version: of.Version, Type: tc.want.MsgType(), Length: uint16(len(raw)), Xid: tc.xid}
			seenTypes[tc.want.MsgType()] = true

			got, err := of.Unmarshal(raw)
			if err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Unmarshal:\n got %+v\nwant %+v", got, tc.want)
			}
			if n := tc.want.Len(); n != len(raw) {
				t.Errorf("Len() = %d, want %d", n, len(raw))
			}
			enc, err := of.Marshal(tc.want)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if !bytes.Equal(enc, raw) {
				t.Errorf("Marshal:\n got %x\nwant %x", enc, raw)
			}
			// Appending to a non-empty buffer must leave the prefix alone.
			prefix := []byte("prefix")
			enc2, err := tc.want.AppendBinary(append([]byte{}, prefix...))
			if err != nil || !bytes.Equal(enc2[:len(prefix)], prefix) || !bytes.Equal(enc2[len(prefix):], raw) {
				t.Errorf("AppendBinary onto a prefix: %x, %v", enc2, err)
			}
		})
	}
	for typ := of.TypeHello; typ <= of.TypeQueueGetConfigReply; typ++ {
		if !seenTypes[typ] {
			t.Errorf("no golden vector for %v", typ)
		}
	}
}

func TestGoldenActions(t *testing.T) {
	for _, name := range allActionNames {
		t.Run(name, func(t *testing.T) {
			raw := mustHex(t, goldenActionHex[name])
			want := goldenActions[name]
			got, err := of.DecodeActions(raw)
			if err != nil {
				t.Fatalf("DecodeActions: %v", err)
			}
			if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
				t.Errorf("DecodeActions = %#v, want %#v", got, want)
			}
			if enc := want.AppendAction(nil); !bytes.Equal(enc, raw) {
				t.Errorf("AppendAction = %x, want %x", enc, raw)
			}
			if want.Len() != len(raw) {
				t.Errorf("Len() = %d, want %d", want.Len(), len(raw))
			}
		})
	}
	// Every action type must have a vector.
	seen := map[of.ActionType]bool{}
	for _, a := range goldenActions {
		seen[a.Type()] = true
	}
	for typ := of.ActionTypeOutput; typ <= of.ActionTypeEnqueue; typ++ {
		if !seen[typ] {
			t.Errorf("no golden vector for %v", typ)
		}
	}
	if !seen[of.ActionTypeVendor] {
		t.Error("no golden vector for VENDOR")
	}
}

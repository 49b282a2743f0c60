package openflow_test

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"

	of "github.com/pseudocong/pseudocong/openflow"
)

// gen builds random but valid messages. Values are uniformly random over
// their wire types; variable parts have random lengths.
type gen struct{ r *rand.Rand }

func (g gen) u8() uint8   { return uint8(g.r.Uint32()) }
func (g gen) u16() uint16 { return uint16(g.r.Uint32()) }
func (g gen) u32() uint32 { return g.r.Uint32() }
func (g gen) u64() uint64 { return g.r.Uint64() }
func (g gen) mac() (m [6]byte) {
	for i := range m {
		m[i] = g.u8()
	}
	return m
}

// bytesN returns nil or 1..max random bytes (decoders give nil for empty).
func (g gen) bytesN(max int) []byte {
	n := g.r.IntN(max + 1)
	if n == 0 {
		return nil
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = g.u8()
	}
	return b
}

// name returns a printable string of at most max bytes (no NUL, since the
// wire format is NUL padded).
func (g gen) name(max int) string {
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789-_ ."
	b := make([]byte, g.r.IntN(max+1))
	for i := range b {
		b[i] = letters[g.r.IntN(len(letters))]
	}
	return string(b)
}

func (g gen) match() of.Match {
	return of.Match{Wildcards: g.u32() & of.WildcardAll, InPort: g.u16(), DlSrc: g.mac(), DlDst: g.mac(),
		DlVlan: g.u16(), DlVlanPcp: g.u8(), DlType: g.u16(), NwTos: g.u8(), NwProto: g.u8(),
		NwSrc: g.u32(), NwDst: g.u32(), TpSrc: g.u16(), TpDst: g.u16()}
}

func (g gen) action() of.Action {
	switch g.r.IntN(14) {
	case 0:
		return of.ActionOutput{Port: g.u16(), MaxLen: g.u16()}
	case 1:
		return of.ActionSetVlanVID{VlanVID: g.u16()}
	case 2:
		return of.ActionSetVlanPCP{VlanPCP: g.u8()}
	case 3:
		return of.ActionStripVlan{}
	case 4:
		return of.ActionSetDlSrc{Addr: g.mac()}
	case 5:
		return of.ActionSetDlDst{Addr: g.mac()}
	case 6:
		return of.ActionSetNwSrc{Addr: g.u32()}
	case 7:
		return of.ActionSetNwDst{Addr: g.u32()}
	case 8:
		return of.ActionSetNwTos{Tos: g.u8()}
	case 9:
		return of.ActionSetTpSrc{Port: g.u16()}
	case 10:
		return of.ActionSetTpDst{Port: g.u16()}
	case 11:
		return of.ActionEnqueue{Port: g.u16(), QueueID: g.u32()}
	default:
		// Vendor data decodes with its padding, so generate whole words.
		d := g.bytesN(4)
		if d != nil {
			d = append(d, make([]byte, 8*len(d)-len(d))...)
		}
		return of.ActionVendor{Vendor: g.u32(), Data: d}
	}
}

func (g gen) actions() []of.Action {
	n := g.r.IntN(5)
	if n == 0 {
		return nil
	}
	acts := make([]of.Action, n)
	for i := range acts {
		acts[i] = g.action()
	}
	return acts
}

func (g gen) phyPort() of.PhyPort {
	return of.PhyPort{PortNo: g.u16(), HWAddr: g.mac(), Name: g.name(16), Config: g.u32(), State: g.u32(),
		Curr: g.u32(), Advertised: g.u32(), Supported: g.u32(), Peer: g.u32()}
}

func (g gen) statsRequestBody() of.StatsRequestBody {
	switch g.r.IntN(7) {
	case 0:
		return of.DescStatsRequest{}
	case 1:
		return of.FlowStatsRequest{Match: g.match(), TableID: g.u8(), OutPort: g.u16()}
	case 2:
		return of.AggregateStatsRequest{Match: g.match(), TableID: g.u8(), OutPort: g.u16()}
	case 3:
		return of.TableStatsRequest{}
	case 4:
		return of.PortStatsRequest{PortNo: g.u16()}
	case 5:
		return of.QueueStatsRequest{PortNo: g.u16(), QueueID: g.u32()}
	default:
		return of.VendorStatsRequest{Vendor: g.u32(), Data: g.bytesN(40)}
	}
}

func (g gen) statsReplyBody() of.StatsReplyBody {
	switch g.r.IntN(7) {
	case 0:
		return of.DescStats{MfrDesc: g.name(256), HwDesc: g.name(256), SwDesc: g.name(256), SerialNum: g.name(32), DpDesc: g.name(256)}
	case 1:
		var r of.FlowStatsReply
		for range g.r.IntN(4) {
			r = append(r, of.FlowStats{TableID: g.u8(), Match: g.match(), DurationSec: g.u32(), DurationNsec: g.u32(),
				Priority: g.u16(), IdleTimeout: g.u16(), HardTimeout: g.u16(), Cookie: g.u64(), PacketCount: g.u64(),
				ByteCount: g.u64(), Actions: g.actions()})
		}
		return r
	case 2:
		return of.AggregateStats{PacketCount: g.u64(), ByteCount: g.u64(), FlowCount: g.u32()}
	case 3:
		var r of.TableStatsReply
		for range g.r.IntN(4) {
			r = append(r, of.TableStats{TableID: g.u8(), Name: g.name(32), Wildcards: g.u32(), MaxEntries: g.u32(),
				ActiveCount: g.u32(), LookupCount: g.u64(), MatchedCount: g.u64()})
		}
		return r
	case 4:
		var r of.PortStatsReply
		for range g.r.IntN(4) {
			r = append(r, of.PortStats{PortNo: g.u16(), RxPackets: g.u64(), TxPackets: g.u64(), RxBytes: g.u64(),
				TxBytes: g.u64(), RxDropped: g.u64(), TxDropped: g.u64(), RxErrors: g.u64(), TxErrors: g.u64(),
				RxFrameErr: g.u64(), RxOverErr: g.u64(), RxCRCErr: g.u64(), Collisions: g.u64()})
		}
		return r
	case 5:
		var r of.QueueStatsReply
		for range g.r.IntN(4) {
			r = append(r, of.QueueStats{PortNo: g.u16(), QueueID: g.u32(), TxBytes: g.u64(), TxPackets: g.u64(), TxErrors: g.u64()})
		}
		return r
	default:
		return of.VendorStatsReply{Vendor: g.u32(), Data: g.bytesN(40)}
	}
}

func (g gen) message(t of.Type) of.Message {
	switch t {
	case of.TypeHello:
		return &of.Hello{Elements: g.bytesN(16)}
	case of.TypeError:
		return &of.ErrorMsg{Type: of.ErrorType(g.u16()), Code: g.u16(), Data: g.bytesN(64)}
	case of.TypeEchoRequest:
		return &of.EchoRequest{Data: g.bytesN(32)}
	case of.TypeEchoReply:
		return &of.EchoReply{Data: g.bytesN(32)}
	case of.TypeVendor:
		return &of.Vendor{Vendor: g.u32(), Data: g.bytesN(32)}
	case of.TypeFeaturesRequest:
		return &of.FeaturesRequest{}
	case of.TypeFeaturesReply:
		m := &of.FeaturesReply{DatapathID: g.u64(), NBuffers: g.u32(), NTables: g.u8(), Capabilities: g.u32(), Actions: g.u32()}
		for range g.r.IntN(4) {
			m.Ports = append(m.Ports, g.phyPort())
		}
		return m
	case of.TypeGetConfigRequest:
		return &of.GetConfigRequest{}
	case of.TypeGetConfigReply:
		return &of.GetConfigReply{Flags: g.u16(), MissSendLen: g.u16()}
	case of.TypeSetConfig:
		return &of.SetConfig{Flags: g.u16(), MissSendLen: g.u16()}
	case of.TypePacketIn:
		return &of.PacketIn{BufferID: g.u32(), TotalLen: g.u16(), InPort: g.u16(), Reason: g.u8(), Data: g.bytesN(128)}
	case of.TypeFlowRemoved:
		return &of.FlowRemoved{Match: g.match(), Cookie: g.u64(), Priority: g.u16(), Reason: g.u8(), DurationSec: g.u32(),
			DurationNsec: g.u32(), IdleTimeout: g.u16(), PacketCount: g.u64(), ByteCount: g.u64()}
	case of.TypePortStatus:
		return &of.PortStatus{Reason: g.u8(), Desc: g.phyPort()}
	case of.TypePacketOut:
		return &of.PacketOut{BufferID: g.u32(), InPort: g.u16(), Actions: g.actions(), Data: g.bytesN(128)}
	case of.TypeFlowMod:
		return &of.FlowMod{Match: g.match(), Cookie: g.u64(), Command: g.u16(), IdleTimeout: g.u16(), HardTimeout: g.u16(),
			Priority: g.u16(), BufferID: g.u32(), OutPort: g.u16(), Flags: g.u16(), Actions: g.actions()}
	case of.TypePortMod:
		return &of.PortMod{PortNo: g.u16(), HWAddr: g.mac(), Config: g.u32(), Mask: g.u32(), Advertise: g.u32()}
	case of.TypeStatsRequest:
		return &of.StatsRequest{Flags: g.u16(), Body: g.statsRequestBody()}
	case of.TypeStatsReply:
		return &of.StatsReply{Flags: g.u16(), Body: g.statsReplyBody()}
	case of.TypeBarrierRequest:
		return &of.BarrierRequest{}
	case of.TypeBarrierReply:
		return &of.BarrierReply{}
	case of.TypeQueueGetConfigRequest:
		return &of.QueueGetConfigRequest{Port: g.u16()}
	case of.TypeQueueGetConfigReply:
		m := &of.QueueGetConfigReply{Port: g.u16()}
		for range g.r.IntN(4) {
			q := of.PacketQueue{QueueID: g.u32()}
			for range g.r.IntN(3) {
				p := of.QueueProperty{Property: of.QueuePropNone}
				if g.r.IntN(2) == 0 {
					p = of.QueueProperty{Property: of.QueuePropMinRate, Rate: g.u16()}
				}
				q.Properties = append(q.Properties, p)
			}
			m.Queues = append(m.Queues, q)
		}
		return m
	}
	panic("no generator for " + t.String())
}

// TestRandomRoundTrip: for random valid messages of every type,
// decode(encode(m)) == m and encode(decode(encode(m))) == encode(m).
func TestRandomRoundTrip(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(1, 2))}
	const perType = 300
	for typ := of.TypeHello; typ <= of.TypeQueueGetConfigReply; typ++ {
		for i := range perType {
			m := g.message(typ)
			m.SetXid(g.u32())
			enc, err := of.Marshal(m)
			if err != nil {
				t.Fatalf("%v #%d: Marshal: %v", typ, i, err)
			}
			if len(enc) != m.Len() {
				t.Fatalf("%v #%d: Len %d, encoded %d", typ, i, m.Len(), len(enc))
			}
			*m.Hdr() = of.Header{Version: of.Version, Type: typ, Length: uint16(len(enc)), Xid: m.GetXid()}
			got, err := of.Unmarshal(enc)
			if err != nil {
				t.Fatalf("%v #%d: Unmarshal(%x): %v", typ, i, enc, err)
			}
			if !reflect.DeepEqual(got, m) {
				t.Fatalf("%v #%d: round trip\n got %+v\nwant %+v", typ, i, got, m)
			}
			enc2, err := of.Marshal(got)
			if err != nil || !bytes.Equal(enc, enc2) {
				t.Fatalf("%v #%d: re-encode differs: %v", typ, i, err)
			}
		}
	}
}

// TestEncodeTooLong: a message over 65535 bytes cannot be framed.
func TestEncodeTooLong(t *testing.T) {
	for _, m := range []of.Message{
		&of.PacketOut{Data: make([]byte, 70000)},
		&of.EchoRequest{Data: make([]byte, 65535)},
		&of.FeaturesReply{Ports: make([]of.PhyPort, 1400)},
	} {
		if _, err := of.Marshal(m); err == nil {
			t.Errorf("%v of %d bytes encoded", m.MsgType(), m.Len())
		}
	}
	if _, err := of.Marshal(&of.StatsReply{}); err == nil {
		t.Error("STATS_REPLY without a body encoded")
	}
}

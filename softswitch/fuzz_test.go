package softswitch

import (
	"testing"

	"github.com/pseudocong/pseudocong/openflow"
)

// FuzzDataPath feeds arbitrary frames through flows that use every action
// (set-fields, VLAN push/pop, controller, flood, normal): nothing may panic
// and every output must stay a well-formed byte slice.
func FuzzDataPath(f *testing.F) {
	f.Add([]byte{}, uint8(0))
	f.Add(make([]byte, 14), uint8(1))
	f.Add(udpFrame(&testing.T{}, 1, 2), uint8(2))
	f.Add(tcpFrame(&testing.T{}, macH1, macH2, 1, 2, 3), uint8(3))
	f.Fuzz(func(t *testing.T, frame []byte, which uint8) {
		r := newRig(t, 3, Config{Buffers: 4})
		actionSets := [][]openflow.Action{
			{openflow.ActionSetNwSrc{Addr: 1}, openflow.ActionSetNwDst{Addr: 2}, openflow.ActionSetTpSrc{Port: 3},
				openflow.ActionSetTpDst{Port: 4}, openflow.ActionSetNwTos{Tos: 8}, output(2)},
			{openflow.ActionSetVlanVID{VlanVID: 5}, output(2), openflow.ActionStripVlan{}, output(3), openflow.ActionSetVlanPCP{VlanPCP: 7}, output(openflow.PortFlood)},
			{openflow.ActionOutput{Port: openflow.PortController, MaxLen: 7}, openflow.ActionSetDlSrc{Addr: [6]byte{1}}, output(openflow.PortNormal)},
			{openflow.ActionStripVlan{}, openflow.ActionSetTpDst{Port: 9}, output(openflow.PortAll), output(openflow.PortInPort)},
		}
		r.send(flowMod(openflow.FlowModAdd, openflow.MatchAll(), 1, actionSets[int(which)%len(actionSets)]...))
		r.sw.Receive(1, append([]byte(nil), frame...))
		r.send(&openflow.PacketOut{Header: openflow.Header{Xid: 1}, BufferID: openflow.NoBuffer, InPort: 2,
			Actions: []openflow.Action{output(openflow.PortTable)}, Data: frame})
		for no := uint16(1); no <= 3; no++ {
			for _, out := range r.sent(no) {
				if len(out) > len(frame)+4 {
					t.Fatalf("output grew from %d to %d bytes", len(frame), len(out))
				}
			}
		}
		for _, m := range r.ctl.take() {
			if pi, ok := m.(*openflow.PacketIn); ok && int(pi.TotalLen) > len(frame)+4 {
				t.Fatalf("packet-in total_len %d for a %d-byte frame", pi.TotalLen, len(frame))
			}
		}
	})
}

package softswitch

import (
	"bytes"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/openflow"
)

func TestMissPacketInFlowModReleasesBuffer(t *testing.T) {
	r := newRig(t, 3, Config{})
	frame := tcpFrame(t, macH1, macH2, 1000, 80, 400)
	r.sw.Receive(1, append([]byte(nil), frame...))
	pi := only[*openflow.PacketIn](t, r.ctl)
	if pi.Reason != openflow.PacketInReasonNoMatch || pi.InPort != 1 || pi.BufferID == openflow.NoBuffer {
		t.Fatalf("packet-in %+v", pi)
	}
	if int(pi.TotalLen) != len(frame) || len(pi.Data) != int(openflow.DefaultMissSendLen) || !bytes.Equal(pi.Data, frame[:128]) {
		t.Fatalf("packet-in data: total %d, %d bytes", pi.TotalLen, len(pi.Data))
	}
	fm := flowMod(openflow.FlowModAdd, matchInPort(1), 10, output(2))
	fm.BufferID = pi.BufferID
	r.send(fm)
	if msgs := r.ctl.take(); len(msgs) != 0 {
		t.Fatalf("unexpected messages %v", types(msgs))
	}
	got := r.sent(2)
	if len(got) != 1 || !bytes.Equal(got[0], frame) {
		t.Fatalf("buffered packet not released to port 2: %d frames", len(got))
	}
	// The released packet counts on the entry it hit.
	r.send(statsReq(9, openflow.FlowStatsRequest{Match: openflow.MatchAll(), TableID: 0xff, OutPort: openflow.PortNone}))
	fs := only[*openflow.StatsReply](t, r.ctl).Body.(openflow.FlowStatsReply)
	if len(fs) != 1 || fs[0].PacketCount != 1 || fs[0].ByteCount != uint64(len(frame)) {
		t.Fatalf("flow stats %+v", fs)
	}
	// The buffer is used up: a second use is BUFFER_EMPTY.
	po := &openflow.PacketOut{Header: openflow.Header{Xid: 3}, BufferID: pi.BufferID, InPort: 1, Actions: []openflow.Action{output(3)}}
	r.send(po)
	expectError(t, r.ctl, openflow.ErrorTypeBadRequest, uint16(openflow.BadRequestBufferEmpty))
	// Later packets hit the flow directly.
	r.sw.Receive(1, append([]byte(nil), frame...))
	if len(r.sent(2)) != 1 || len(r.ctl.take()) != 0 {
		t.Fatal("second packet must hit the flow")
	}
}

func TestStaleBufferIDIsUnknown(t *testing.T) {
	r := newRig(t, 2, Config{Buffers: 2})
	var ids []uint32
	for i := range 3 {
		r.sw.Receive(1, tcpFrame(t, macH1, macH2, uint16(1000+i), 80, 0))
		ids = append(ids, only[*openflow.PacketIn](t, r.ctl).BufferID)
	}
	// Both slots are in use and young: the third packet went unbuffered.
	if ids[2] != openflow.NoBuffer {
		t.Fatalf("third packet-in must carry NO_BUFFER, got %#x", ids[2])
	}
	// After the lifetime, slot 0 is reused with a new generation.
	r.sim.RunFor(6 * time.Second)
	r.sw.Receive(1, tcpFrame(t, macH1, macH2, 2000, 80, 0))
	fresh := only[*openflow.PacketIn](t, r.ctl).BufferID
	// Two slots: the low bit of an id is its slot.
	stale := ids[0]
	if fresh&1 == ids[1]&1 {
		stale = ids[1]
	}
	if fresh == openflow.NoBuffer || fresh == stale || fresh&1 != stale&1 {
		t.Fatalf("fresh id %#x must reuse a slot with a new generation (old %#x %#x)", fresh, ids[0], ids[1])
	}
	r.send(&openflow.PacketOut{Header: openflow.Header{Xid: 4}, BufferID: stale, InPort: 1, Actions: []openflow.Action{output(2)}})
	expectError(t, r.ctl, openflow.ErrorTypeBadRequest, uint16(openflow.BadRequestBufferUnknown))
	r.send(&openflow.PacketOut{Header: openflow.Header{Xid: 5}, BufferID: fresh, InPort: 1, Actions: []openflow.Action{output(2)}})
	if len(r.sent(2)) != 1 || len(r.ctl.take()) != 0 {
		t.Fatal("fresh buffer must be released")
	}
}

func TestPacketOutData(t *testing.T) {
	r := newRig(t, 3, Config{})
	frame := udpFrame(t, 1, 2)
	r.send(&openflow.PacketOut{Header: openflow.Header{Xid: 1}, BufferID: openflow.NoBuffer, InPort: openflow.PortNone,
		Actions: []openflow.Action{output(3), output(1)}, Data: frame})
	if a, b := r.sent(3), r.sent(1); len(a) != 1 || len(b) != 1 || !bytes.Equal(a[0], frame) || !bytes.Equal(b[0], frame) {
		t.Fatal("packet-out must reach ports 3 and 1")
	}
	// OUTPUT:TABLE runs the packet through the flow table.
	r.send(flowMod(openflow.FlowModAdd, matchInPort(2), 1, output(3)))
	r.send(&openflow.PacketOut{Header: openflow.Header{Xid: 2}, BufferID: openflow.NoBuffer, InPort: 2,
		Actions: []openflow.Action{output(openflow.PortTable)}, Data: frame})
	if len(r.sent(3)) != 1 {
		t.Fatal("TABLE must forward through the flow")
	}
	// A vendor action is refused.
	r.send(&openflow.PacketOut{Header: openflow.Header{Xid: 3}, BufferID: openflow.NoBuffer, InPort: 2,
		Actions: []openflow.Action{openflow.ActionVendor{Vendor: 0x2320}}, Data: frame})
	expectError(t, r.ctl, openflow.ErrorTypeBadAction, uint16(openflow.BadActionBadVendor))
}

func TestFloodAllAndPortMod(t *testing.T) {
	r := newRig(t, 4, Config{})
	r.send(&openflow.PortMod{Header: openflow.Header{Xid: 1}, PortNo: 3, HWAddr: MemPortMAC(1, 3),
		Config: openflow.PortConfigNoFlood, Mask: openflow.PortConfigNoFlood})
	ps := only[*openflow.PortStatus](t, r.ctl)
	if ps.Reason != openflow.PortReasonModify || ps.Desc.PortNo != 3 || ps.Desc.Config != openflow.PortConfigNoFlood {
		t.Fatalf("port status %+v", ps)
	}
	cases := []struct {
		port uint16
		want []uint16
	}{
		{openflow.PortFlood, []uint16{2, 4}},
		{openflow.PortAll, []uint16{2, 3, 4}},
		{openflow.PortInPort, []uint16{1}},
		{1, nil}, // output to the input port by number is dropped
	}
	for _, c := range cases {
		r.send(&openflow.PacketOut{Header: openflow.Header{Xid: 2}, BufferID: openflow.NoBuffer, InPort: 1,
			Actions: []openflow.Action{output(c.port)}, Data: udpFrame(t, 1, 2)})
		var got []uint16
		for no := uint16(1); no <= 4; no++ {
			if n := len(r.sent(no)); n > 0 {
				got = append(got, no)
			}
		}
		if !equalU16(got, c.want) {
			t.Errorf("output %s: ports %v, want %v", openflow.PortName(c.port), got, c.want)
		}
	}
	// PORT_DOWN stops transmission; NO_FWD too.
	r.send(&openflow.PortMod{Header: openflow.Header{Xid: 3}, PortNo: 2, HWAddr: MemPortMAC(1, 2),
		Config: openflow.PortConfigPortDown, Mask: openflow.PortConfigPortDown})
	r.ctl.take()
	r.send(&openflow.PacketOut{Header: openflow.Header{Xid: 4}, BufferID: openflow.NoBuffer, InPort: 1,
		Actions: []openflow.Action{output(2)}, Data: udpFrame(t, 1, 2)})
	if len(r.sent(2)) != 0 {
		t.Fatal("a down port must not transmit")
	}
	// Errors.
	r.send(&openflow.PortMod{Header: openflow.Header{Xid: 5}, PortNo: 2, HWAddr: [6]byte{9}, Mask: 0})
	expectError(t, r.ctl, openflow.ErrorTypePortModFailed, uint16(openflow.PortModFailedBadHwAddr))
	r.send(&openflow.PortMod{Header: openflow.Header{Xid: 6}, PortNo: 99})
	expectError(t, r.ctl, openflow.ErrorTypePortModFailed, uint16(openflow.PortModFailedBadPort))
}

func TestNoPacketInPortConfig(t *testing.T) {
	r := newRig(t, 2, Config{})
	r.send(&openflow.PortMod{Header: openflow.Header{Xid: 1}, PortNo: 1, HWAddr: MemPortMAC(1, 1),
		Config: openflow.PortConfigNoPacketIn, Mask: openflow.PortConfigNoPacketIn})
	r.ctl.take()
	r.sw.Receive(1, udpFrame(t, 1, 2))
	r.sw.Receive(2, udpFrame(t, 1, 2))
	if msgs := r.ctl.take(); len(msgs) != 1 || msgs[0].(*openflow.PacketIn).InPort != 2 {
		t.Fatalf("only port 2 may produce packet-ins, got %v", types(msgs))
	}
}

func TestControllerActionMaxLen(t *testing.T) {
	r := newRig(t, 2, Config{})
	r.send(flowMod(openflow.FlowModAdd, openflow.MatchAll(), 1,
		openflow.ActionOutput{Port: openflow.PortController, MaxLen: 20}, output(2)))
	frame := udpFrame(t, 1, 2)
	r.sw.Receive(1, append([]byte(nil), frame...))
	pi := only[*openflow.PacketIn](t, r.ctl)
	if pi.Reason != openflow.PacketInReasonAction || len(pi.Data) != 20 || int(pi.TotalLen) != len(frame) {
		t.Fatalf("packet-in %+v", pi)
	}
	if got := r.sent(2); len(got) != 1 || !bytes.Equal(got[0], frame) {
		t.Fatal("output after CONTROLLER must still happen")
	}
}

func TestSetConfigMissSendLenAndNoBuffers(t *testing.T) {
	r := newRig(t, 2, Config{Buffers: -1})
	r.send(&openflow.SetConfig{Header: openflow.Header{Xid: 1}, MissSendLen: 64})
	r.send(&openflow.GetConfigRequest{Header: openflow.Header{Xid: 2}})
	gc := only[*openflow.GetConfigReply](t, r.ctl)
	if gc.MissSendLen != 64 || gc.Xid != 2 {
		t.Fatalf("get config %+v", gc)
	}
	frame := tcpFrame(t, macH1, macH2, 1, 2, 300)
	r.sw.Receive(1, append([]byte(nil), frame...))
	pi := only[*openflow.PacketIn](t, r.ctl)
	// Without buffers the whole packet goes up whatever miss_send_len says.
	if pi.BufferID != openflow.NoBuffer || !bytes.Equal(pi.Data, frame) {
		t.Fatalf("unbuffered packet-in: id %#x, %d bytes", pi.BufferID, len(pi.Data))
	}
}

func TestFeaturesReply(t *testing.T) {
	r := newRig(t, 3, Config{DatapathID: 0xabc})
	r.send(&openflow.FeaturesRequest{Header: openflow.Header{Xid: 5}})
	f := only[*openflow.FeaturesReply](t, r.ctl)
	if f.DatapathID != 0xabc || f.NBuffers != 256 || f.NTables != 1 || f.Xid != 5 || len(f.Ports) != 3 {
		t.Fatalf("features %+v", f)
	}
	if f.Actions != 0xfff || f.Capabilities&(openflow.CapFlowStats|openflow.CapTableStats|openflow.CapPortStats) == 0 {
		t.Fatalf("actions %#x capabilities %#x", f.Actions, f.Capabilities)
	}
	for i, p := range f.Ports {
		if p.PortNo != uint16(i+1) || p.HWAddr != MemPortMAC(1, uint16(i+1)) {
			t.Fatalf("port %d: %+v", i, p)
		}
	}
}

func TestVendorAndUnexpectedMessages(t *testing.T) {
	r := newRig(t, 1, Config{})
	r.send(&openflow.Vendor{Header: openflow.Header{Xid: 1}, Vendor: 0x2320, Data: []byte{0, 0, 0, 11}})
	expectError(t, r.ctl, openflow.ErrorTypeBadRequest, uint16(openflow.BadRequestBadVendor))
	r.send(statsReq(2, openflow.VendorStatsRequest{Vendor: 0x2320}))
	expectError(t, r.ctl, openflow.ErrorTypeBadRequest, uint16(openflow.BadRequestBadVendor))
	r.send(&openflow.PacketIn{Header: openflow.Header{Xid: 3}})
	expectError(t, r.ctl, openflow.ErrorTypeBadRequest, uint16(openflow.BadRequestBadType))
	// Echo traffic is the connection's openflow.Channel's, not the core's.
	r.send(&openflow.EchoRequest{Header: openflow.Header{Xid: 4}, Data: []byte("hi")})
	r.send(&openflow.BarrierRequest{Header: openflow.Header{Xid: 5}})
	if e := only[*openflow.BarrierReply](t, r.ctl); e.Xid != 5 {
		t.Fatalf("barrier %+v", e)
	}
}

func TestFlowModErrors(t *testing.T) {
	cases := []struct {
		name string
		fm   *openflow.FlowMod
		typ  openflow.ErrorType
		code uint16
	}{
		{"bad out port", flowMod(openflow.FlowModAdd, openflow.MatchAll(), 1, output(0)), openflow.ErrorTypeBadAction, uint16(openflow.BadActionBadOutPort)},
		{"table in flow", flowMod(openflow.FlowModAdd, openflow.MatchAll(), 1, output(openflow.PortTable)), openflow.ErrorTypeBadAction, uint16(openflow.BadActionBadOutPort)},
		{"vlan vid range", flowMod(openflow.FlowModAdd, openflow.MatchAll(), 1, openflow.ActionSetVlanVID{VlanVID: 5000}), openflow.ErrorTypeBadAction, uint16(openflow.BadActionBadArgument)},
		{"vendor action", flowMod(openflow.FlowModAdd, openflow.MatchAll(), 1, openflow.ActionVendor{Vendor: 1}), openflow.ErrorTypeBadAction, uint16(openflow.BadActionBadVendor)},
		{"bad command", flowMod(7, openflow.MatchAll(), 1), openflow.ErrorTypeFlowModFailed, uint16(openflow.FlowModFailedBadCommand)},
		{"emerg with timeout", func() *openflow.FlowMod {
			f := flowMod(openflow.FlowModAdd, openflow.MatchAll(), 1, output(1))
			f.Flags, f.IdleTimeout = openflow.FlowModFlagEmerg, 5
			return f
		}(), openflow.ErrorTypeFlowModFailed, uint16(openflow.FlowModFailedBadEmergTimeout)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, 1, Config{})
			r.send(c.fm)
			expectError(t, r.ctl, c.typ, c.code)
		})
	}
}

func TestTableFullThroughSwitch(t *testing.T) {
	r := newRig(t, 1, Config{TableCapacity: 1})
	r.send(flowMod(openflow.FlowModAdd, matchInPort(1), 1, output(2)))
	r.send(flowMod(openflow.FlowModAdd, matchInPort(2), 1, output(1)))
	expectError(t, r.ctl, openflow.ErrorTypeFlowModFailed, uint16(openflow.FlowModFailedAllTablesFull))
}

func TestIdleTimeoutFlowRemovedOnSimClock(t *testing.T) {
	r := newRig(t, 2, Config{})
	fm := flowMod(openflow.FlowModAdd, matchInPort(1), 1, output(2))
	fm.IdleTimeout, fm.HardTimeout, fm.Flags, fm.Cookie = 5, 20, openflow.FlowModFlagSendFlowRem, 0x42
	r.send(fm)
	// Traffic at t=3s keeps the entry alive until 8s.
	r.sim.RunFor(3 * time.Second)
	r.sw.Receive(1, udpFrame(t, 1, 2))
	r.sim.RunFor(4 * time.Second) // t=7s
	if msgs := r.ctl.take(); len(msgs) != 0 {
		t.Fatalf("removed too early: %v", types(msgs))
	}
	r.sim.Run()
	fr := only[*openflow.FlowRemoved](t, r.ctl)
	if fr.Reason != openflow.FlowRemovedIdleTimeout || fr.Cookie != 0x42 || fr.PacketCount != 1 || fr.DurationSec != 8 {
		t.Fatalf("flow removed %+v", fr)
	}
	if got := r.sim.Elapsed(); got != 8*time.Second {
		t.Fatalf("removed at %v, want 8s", got)
	}
	if r.sim.Pending() != 0 {
		t.Fatal("no timer may stay armed on an empty table")
	}
}

func TestHardTimeoutWithoutSendFlowRem(t *testing.T) {
	r := newRig(t, 2, Config{})
	fm := flowMod(openflow.FlowModAdd, matchInPort(1), 1, output(2))
	fm.HardTimeout = 2
	r.send(fm)
	r.sim.Run()
	if msgs := r.ctl.take(); len(msgs) != 0 {
		t.Fatalf("no FLOW_REMOVED without SEND_FLOW_REM, got %v", types(msgs))
	}
	r.sw.Receive(1, udpFrame(t, 1, 2))
	if _, ok := only[*openflow.PacketIn](t, r.ctl), true; !ok {
		t.Fatal("entry must be gone")
	}
}

func TestDeleteSendsFlowRemovedBeforeBarrierReply(t *testing.T) {
	r := newRig(t, 3, Config{})
	add := flowMod(openflow.FlowModAdd, matchInPort(1), 1, output(2))
	add.Flags = openflow.FlowModFlagSendFlowRem
	r.send(add)
	add2 := flowMod(openflow.FlowModAdd, matchInPort(2), 1, output(3))
	add2.Flags = openflow.FlowModFlagSendFlowRem
	r.send(add2)
	del := flowMod(openflow.FlowModDelete, openflow.MatchAll(), 0)
	del.OutPort = 3
	r.send(del)
	r.send(flowMod(openflow.FlowModAdd, openflow.MatchAll(), 1, output(0))) // error
	r.send(&openflow.BarrierRequest{Header: openflow.Header{Xid: 99}})
	msgs := r.ctl.take()
	if got := types(msgs); len(got) != 3 || got[0] != "FLOW_REMOVED" || got[1] != "ERROR" || got[2] != "BARRIER_REPLY" {
		t.Fatalf("order %v", got)
	}
	if fr := msgs[0].(*openflow.FlowRemoved); fr.Reason != openflow.FlowRemovedDelete || fr.Match.InPort != 2 {
		t.Fatalf("flow removed %+v", fr)
	}
	if msgs[2].GetXid() != 99 {
		t.Fatal("barrier xid")
	}
}

func TestFailModes(t *testing.T) {
	t.Run("secure drops misses", func(t *testing.T) {
		r := newRig(t, 3, Config{})
		r.sw.Detach(r.ctl)
		r.sw.Receive(1, udpFrame(t, 1, 2))
		for no := uint16(1); no <= 3; no++ {
			if len(r.sent(no)) != 0 {
				t.Fatal("fail-secure must drop")
			}
		}
	})
	t.Run("standalone learns", func(t *testing.T) {
		r := newRig(t, 3, Config{FailMode: FailStandalone})
		r.sw.Detach(r.ctl)
		// h1 on port 1 -> h2 (unknown): flood to 2 and 3.
		r.sw.Receive(1, tcpFrame(t, macH1, macH2, 1, 2, 0))
		if len(r.sent(2)) != 1 || len(r.sent(3)) != 1 {
			t.Fatal("unknown destination must flood")
		}
		// h2 on port 3 -> h1 (learned on 1): unicast.
		r.sw.Receive(3, tcpFrame(t, macH2, macH1, 2, 1, 0))
		if len(r.sent(1)) != 1 || len(r.sent(2)) != 0 {
			t.Fatal("learned destination must be unicast")
		}
		// And h1 -> h2 now goes to 3 only.
		r.sw.Receive(1, tcpFrame(t, macH1, macH2, 1, 2, 0))
		if len(r.sent(3)) != 1 || len(r.sent(2)) != 0 {
			t.Fatal("learned destination must be unicast")
		}
		// A controller takes over again.
		r.sw.Attach(r.ctl)
		r.sw.Receive(1, tcpFrame(t, macH1, macH2, 1, 2, 0))
		only[*openflow.PacketIn](t, r.ctl)
	})
}

func TestServiceChannelGetsNoAsync(t *testing.T) {
	r := newRig(t, 2, Config{})
	svc := newChannel(t, RoleService)
	r.sw.Attach(svc)
	r.sw.Receive(1, udpFrame(t, 1, 2))
	only[*openflow.PacketIn](t, r.ctl)
	if msgs := svc.take(); len(msgs) != 0 {
		t.Fatalf("service channel got %v", types(msgs))
	}
	r.sw.HandleMessage(svc, &openflow.BarrierRequest{Header: openflow.Header{Xid: 3}})
	only[*openflow.BarrierReply](t, svc)
}

func equalU16(a, b []uint16) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

package softswitch

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/pseudocong/pseudocong/openflow"
)

func TestPortLifecycleAnnouncesPortStatus(t *testing.T) {
	r := newRig(t, 2, Config{})
	r.ports[3] = NewMemPort(3, "p3", MemPortMAC(1, 3), nil)
	if err := r.sw.AddPort(r.ports[3]); err != nil {
		t.Fatal(err)
	}
	if ps := only[*openflow.PortStatus](t, r.ctl); ps.Reason != openflow.PortReasonAdd || ps.Desc.PortNo != 3 {
		t.Fatalf("add: %+v", ps)
	}
	if err := r.sw.AddPort(NewMemPort(3, "dup", [6]byte{}, nil)); err == nil {
		t.Fatal("duplicate port accepted")
	}
	if err := r.sw.AddPort(NewMemPort(0, "zero", [6]byte{}, nil)); err == nil {
		t.Fatal("port 0 accepted")
	}
	if err := r.sw.SetLinkDown(3, true); err != nil {
		t.Fatal(err)
	}
	if ps := only[*openflow.PortStatus](t, r.ctl); ps.Reason != openflow.PortReasonModify || ps.Desc.State&openflow.PortStateLinkDown == 0 {
		t.Fatalf("link down: %+v", ps)
	}
	// A link-down port neither receives nor transmits.
	r.sw.Receive(3, udpFrame(t, 1, 2))
	r.send(&openflow.PacketOut{Header: openflow.Header{Xid: 1}, BufferID: openflow.NoBuffer, InPort: 1,
		Actions: []openflow.Action{output(3)}, Data: udpFrame(t, 1, 2)})
	if msgs := r.ctl.take(); len(msgs) != 0 || len(r.sent(3)) != 0 {
		t.Fatalf("down port active: %v", types(msgs))
	}
	if err := r.sw.SetLinkDown(3, true); err != nil { // no change: no message
		t.Fatal(err)
	}
	if err := r.sw.RemovePort(3); err != nil {
		t.Fatal(err)
	}
	if ps := only[*openflow.PortStatus](t, r.ctl); ps.Reason != openflow.PortReasonDelete || ps.Desc.PortNo != 3 {
		t.Fatalf("delete: %+v", ps)
	}
	if err := r.sw.RemovePort(3); err == nil {
		t.Fatal("removing a missing port succeeded")
	}
}

func TestNoRecvAndFragDrop(t *testing.T) {
	r := newRig(t, 2, Config{})
	r.send(&openflow.PortMod{Header: openflow.Header{Xid: 1}, PortNo: 2, HWAddr: MemPortMAC(1, 2),
		Config: openflow.PortConfigNoRecv, Mask: openflow.PortConfigNoRecv})
	r.ctl.take()
	r.sw.Receive(2, udpFrame(t, 1, 2))
	if msgs := r.ctl.take(); len(msgs) != 0 {
		t.Fatalf("NO_RECV port produced %v", types(msgs))
	}
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolUDP, Flags: layers.IPv4MoreFragments,
		SrcIP: net.IP{10, 0, 0, 1}, DstIP: net.IP{10, 0, 0, 2}}
	frag := serialize(t, &layers.Ethernet{SrcMAC: macH1, DstMAC: macH2, EthernetType: layers.EthernetTypeIPv4}, ip, gopacket.Payload(make([]byte, 16)))
	r.sw.Receive(1, append([]byte(nil), frag...))
	only[*openflow.PacketIn](t, r.ctl) // FRAG_NORMAL: a fragment is a packet
	r.send(&openflow.SetConfig{Header: openflow.Header{Xid: 2}, Flags: openflow.ConfigFragDrop, MissSendLen: 128})
	r.sw.Receive(1, append([]byte(nil), frag...))
	if msgs := r.ctl.take(); len(msgs) != 0 {
		t.Fatalf("FRAG_DROP let a fragment through: %v", types(msgs))
	}
	r.sw.Receive(1, udpFrame(t, 1, 2))
	only[*openflow.PacketIn](t, r.ctl)
	r.send(statsReq(3, openflow.PortStatsRequest{PortNo: openflow.PortNone}))
	ps := only[*openflow.StatsReply](t, r.ctl).Body.(openflow.PortStatsReply)
	if ps[0].RxDropped != 1 || ps[1].RxDropped != 1 || ps[0].RxPackets != 3 {
		t.Fatalf("port stats %+v", ps)
	}
}

// refusingPort fails every transmission.
type refusingPort struct{ *MemPort }

func (refusingPort) Transmit([]byte) error { return errors.New("link gone") }

func TestTransmitErrorCountsAsTxDropped(t *testing.T) {
	r := newRig(t, 1, Config{})
	if err := r.sw.AddPort(refusingPort{NewMemPort(2, "bad", MemPortMAC(1, 2), nil)}); err != nil {
		t.Fatal(err)
	}
	r.ctl.take()
	r.send(&openflow.PacketOut{Header: openflow.Header{Xid: 1}, BufferID: openflow.NoBuffer, InPort: 1,
		Actions: []openflow.Action{output(2)}, Data: udpFrame(t, 1, 2)})
	r.send(statsReq(2, openflow.PortStatsRequest{PortNo: 2}))
	ps := only[*openflow.StatsReply](t, r.ctl).Body.(openflow.PortStatsReply)
	if ps[0].TxPackets != 0 || ps[0].TxDropped != 1 {
		t.Fatalf("port stats %+v", ps)
	}
}

func TestLearningTableBoundedAndAged(t *testing.T) {
	l := newLearningTable(3, 10*time.Second)
	now := start
	for i := range 10 {
		l.learn([6]byte{2, 0, 0, 0, 0, byte(i)}, uint16(i), now)
	}
	if len(l.macs) != 3 {
		t.Fatalf("%d entries, limit 3", len(l.macs))
	}
	if _, ok := l.lookup([6]byte{2, 0, 0, 0, 0, 0}, now); ok {
		t.Fatal("oldest entry not evicted")
	}
	if p, ok := l.lookup([6]byte{2, 0, 0, 0, 0, 9}, now); !ok || p != 9 {
		t.Fatal("newest entry missing")
	}
	if _, ok := l.lookup([6]byte{2, 0, 0, 0, 0, 9}, now.Add(11*time.Second)); ok {
		t.Fatal("entry older than the age still valid")
	}
	l.learn([6]byte{1, 0, 0, 0, 0, 1}, 1, now) // multicast source: never learned
	if _, ok := l.macs[[6]byte{1, 0, 0, 0, 0, 1}]; ok {
		t.Fatal("multicast source learned")
	}
	l.forgetPort(9)
	if _, ok := l.lookup([6]byte{2, 0, 0, 0, 0, 9}, now); ok {
		t.Fatal("forgotten port still mapped")
	}
	if len(l.order) > 2*l.limit+1 {
		t.Fatalf("order list grew to %d", len(l.order))
	}
}

func TestParseFailMode(t *testing.T) {
	for _, c := range []struct {
		in   string
		want FailMode
		ok   bool
	}{{"secure", FailSecure, true}, {"standalone", FailStandalone, true}, {"open", 0, false}} {
		got, err := ParseFailMode(c.in)
		if (err == nil) != c.ok || got != c.want || (c.ok && got.String() != c.in) {
			t.Errorf("ParseFailMode(%q) = %v, %v", c.in, got, err)
		}
	}
}

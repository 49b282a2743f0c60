package softswitch

import (
	"bytes"
	"net"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/packet"
)

// recomputed decodes a frame with gopacket and serializes it again with
// freshly computed checksums: equal bytes mean the switch's incremental
// checksum updates were right.
func recomputed(t *testing.T, frame []byte) []byte {
	t.Helper()
	p := gopacket.NewPacket(frame, layers.LayerTypeEthernet, gopacket.Default)
	if el := p.ErrorLayer(); el != nil {
		t.Fatalf("decode: %v", el.Error())
	}
	var ls []gopacket.SerializableLayer
	var ip *layers.IPv4
	for _, l := range p.Layers() {
		switch l := l.(type) {
		case *layers.IPv4:
			ip = l
		case *layers.TCP:
			_ = l.SetNetworkLayerForChecksum(ip)
		case *layers.UDP:
			_ = l.SetNetworkLayerForChecksum(ip)
		}
		if s, ok := l.(gopacket.SerializableLayer); ok {
			ls = append(ls, s)
		}
	}
	return serialize(t, ls...)
}

func TestSetFieldRewritesWithChecksums(t *testing.T) {
	newSrc := [6]byte{0x02, 0xaa, 0, 0, 0, 1}
	cases := []struct {
		name    string
		frame   func(*testing.T) []byte
		actions []openflow.Action
		check   func(t *testing.T, p gopacket.Packet)
	}{
		{"nw_src nw_dst tp ports tcp", func(t *testing.T) []byte { return tcpFrame(t, macH1, macH2, 1000, 80, 33) },
			[]openflow.Action{openflow.ActionSetNwSrc{Addr: 0xc0a80101}, openflow.ActionSetNwDst{Addr: 0xc0a80202},
				openflow.ActionSetTpSrc{Port: 4444}, openflow.ActionSetTpDst{Port: 8080}},
			func(t *testing.T, p gopacket.Packet) {
				ip := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
				tcp := p.Layer(layers.LayerTypeTCP).(*layers.TCP)
				if !ip.SrcIP.Equal(net.IP{192, 168, 1, 1}) || !ip.DstIP.Equal(net.IP{192, 168, 2, 2}) || tcp.SrcPort != 4444 || tcp.DstPort != 8080 {
					t.Fatalf("fields %v %v %d %d", ip.SrcIP, ip.DstIP, tcp.SrcPort, tcp.DstPort)
				}
			}},
		{"udp ports and tos", func(t *testing.T) []byte { return udpFrame(t, 5000, 5001) },
			[]openflow.Action{openflow.ActionSetTpDst{Port: 9}, openflow.ActionSetNwTos{Tos: 0xb8}, openflow.ActionSetDlSrc{Addr: newSrc}},
			func(t *testing.T, p gopacket.Packet) {
				ip := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
				udp := p.Layer(layers.LayerTypeUDP).(*layers.UDP)
				eth := p.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
				if udp.DstPort != 9 || ip.TOS != 0xb8 || !bytes.Equal(eth.SrcMAC, newSrc[:]) {
					t.Fatalf("udp %d tos %#x src %v", udp.DstPort, ip.TOS, eth.SrcMAC)
				}
			}},
		{"push vlan then pcp", func(t *testing.T) []byte { return tcpFrame(t, macH1, macH2, 1, 2, 10) },
			[]openflow.Action{openflow.ActionSetVlanVID{VlanVID: 42}, openflow.ActionSetVlanPCP{VlanPCP: 5}, openflow.ActionSetNwSrc{Addr: 0x01020304}},
			func(t *testing.T, p gopacket.Packet) {
				q, ok := p.Layer(layers.LayerTypeDot1Q).(*layers.Dot1Q)
				if !ok || q.VLANIdentifier != 42 || q.Priority != 5 {
					t.Fatalf("vlan %+v", q)
				}
				if ip := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4); !ip.SrcIP.Equal(net.IP{1, 2, 3, 4}) {
					t.Fatalf("src %v after push", ip.SrcIP)
				}
			}},
		{"strip vlan", func(t *testing.T) []byte {
			ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: net.IP{10, 0, 0, 1}, DstIP: net.IP{10, 0, 0, 2}}
			udp := &layers.UDP{SrcPort: 1, DstPort: 2}
			_ = udp.SetNetworkLayerForChecksum(ip)
			return serialize(t, &layers.Ethernet{SrcMAC: macH1, DstMAC: macH2, EthernetType: layers.EthernetTypeDot1Q},
				&layers.Dot1Q{VLANIdentifier: 7, Type: layers.EthernetTypeIPv4}, ip, udp, gopacket.Payload("x"))
		}, []openflow.Action{openflow.ActionStripVlan{}, openflow.ActionSetTpSrc{Port: 77}},
			func(t *testing.T, p gopacket.Packet) {
				if p.Layer(layers.LayerTypeDot1Q) != nil {
					t.Fatal("tag still present")
				}
				if udp := p.Layer(layers.LayerTypeUDP).(*layers.UDP); udp.SrcPort != 77 {
					t.Fatalf("udp src %d", udp.SrcPort)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, 2, Config{})
			r.send(flowMod(openflow.FlowModAdd, openflow.MatchAll(), 1, append(c.actions, output(2))...))
			r.sw.Receive(1, c.frame(t))
			got := r.sent(2)
			if len(got) != 1 {
				t.Fatalf("%d frames out", len(got))
			}
			want := recomputed(t, got[0])
			// Serializing pads short frames to 60 bytes; a popped tag
			// leaves a frame 4 bytes shorter than that.
			if len(want) > len(got[0]) && !bytes.ContainsFunc(want[len(got[0]):], func(r rune) bool { return r != 0 }) {
				want = want[:len(got[0])]
			}
			if !bytes.Equal(got[0], want) {
				t.Fatalf("checksums wrong:\n got  %x\n want %x", got[0], want)
			}
			c.check(t, gopacket.NewPacket(got[0], layers.LayerTypeEthernet, gopacket.Default))
		})
	}
}

func TestOutputBeforeRewriteKeepsOriginal(t *testing.T) {
	r := newRig(t, 3, Config{})
	r.send(flowMod(openflow.FlowModAdd, openflow.MatchAll(), 1,
		output(2), openflow.ActionSetTpDst{Port: 9999}, output(3)))
	frame := udpFrame(t, 1, 2)
	r.sw.Receive(1, append([]byte(nil), frame...))
	a, b := r.sent(2), r.sent(3)
	if len(a) != 1 || len(b) != 1 || !bytes.Equal(a[0], frame) || bytes.Equal(b[0], frame) {
		t.Fatal("port 2 must get the original, port 3 the rewritten frame")
	}
}

func TestCsumReplace(t *testing.T) {
	// Property: updating incrementally equals recomputing from scratch.
	words := []uint16{0x4500, 0x0073, 0x0000, 0x4000, 0x4011, 0x0000, 0xc0a8, 0x0001, 0xc0a8, 0x00c7}
	full := func(w []uint16) uint16 {
		var s uint32
		for _, x := range w {
			s += uint32(x)
		}
		for s>>16 != 0 {
			s = s&0xffff + s>>16
		}
		return ^uint16(s)
	}
	sum := full(words)
	for i, nv := range []uint16{0xffff, 0, 0x1234, 0xfffe} {
		old := words[(i*3)%len(words)]
		words[(i*3)%len(words)] = nv
		sum = packet.UpdateChecksum16(sum, old, nv)
		if want := full(words); sum != want && !(sum == 0xffff && want == 0) && !(sum == 0 && want == 0xffff) {
			t.Fatalf("step %d: incremental %#x, full %#x", i, sum, want)
		}
	}
}

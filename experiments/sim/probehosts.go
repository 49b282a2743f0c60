package sim

import (
	"fmt"
	"math"
	"time"

	"github.com/pseudocong/pseudocong/netsim"
	"github.com/pseudocong/pseudocong/packet"
	"github.com/pseudocong/pseudocong/probes"
)

// The probe hosts: the probes package's sans-I/O prober and responder
// attached to netsim Hosts. A probe packet becomes a real TCP/IPv4
// segment (package packet builds it, checksums included) and a received
// segment a probe packet again, so the switch parses what it would parse
// in a live run and Packet-Ins carry real frames to the controller.

// zeros is the payload of data probes (the bytes stay zero; the checksum
// covers them all the same).
var zeros = make([]byte, 1<<16)

// fillTCP sets p's IPv4 and TCP layers for probe packet pp (the frame the
// old hand-written codec built: DF, TTL 64, the flow index as IP id,
// window 65535, no options).
func fillTCP(p *packet.Packet, pp probes.ProbePacket) error {
	t := pp.Tuple
	if !t.SrcIP.Is4() || !t.DstIP.Is4() || t.Proto != probes.ProtoTCP {
		return fmt.Errorf("probe %v: not a TCP/IPv4 tuple", t)
	}
	*p = packet.Packet{Layers: packet.LayerIPv4 | packet.LayerTCP}
	p.IPv4 = packet.IPv4{TTL: 64, Flags: packet.IPv4DontFragment, ID: uint16(pp.Index),
		Src: t.SrcIP.As4(), Dst: t.DstIP.As4()}
	p.TCP = packet.TCP{SrcPort: t.SrcPort, DstPort: t.DstPort, Seq: pp.Seq, Ack: pp.Ack, Window: 65535}
	switch pp.Type {
	case probes.PacketSYN:
		p.TCP.Flags = packet.TCPFlagSYN
	case probes.PacketSYNACK:
		p.TCP.Flags = packet.TCPFlagSYN | packet.TCPFlagACK
	case probes.PacketData:
		p.TCP.Flags = packet.TCPFlagPSH | packet.TCPFlagACK
		if pp.PayloadLen < 0 || pp.PayloadLen > len(zeros)-packet.IPv4MinLen-packet.TCPMinLen {
			return fmt.Errorf("probe %v: payload %d", t, pp.PayloadLen)
		}
		p.Payload = zeros[:pp.PayloadLen]
	case probes.PacketACK:
		p.TCP.Flags = packet.TCPFlagACK
	default:
		return fmt.Errorf("probe %v: unknown packet type %v", t, pp.Type)
	}
	return nil
}

// probeOf turns a received TCP segment back into a probe packet. Index
// and Attempt are not on the wire and come back as zero (the prober
// matches replies by tuple and ack).
func probeOf(p *packet.Packet) (probes.ProbePacket, error) {
	var pp probes.ProbePacket
	if !p.Layers.Has(packet.LayerTCP) {
		return pp, fmt.Errorf("probe host: IP protocol %d is not TCP", p.IPv4.Protocol)
	}
	t := &p.TCP
	pp.Tuple = probes.FiveTuple{SrcIP: p.IPv4.SrcAddr(), DstIP: p.IPv4.DstAddr(),
		SrcPort: t.SrcPort, DstPort: t.DstPort, Proto: probes.ProtoTCP}
	pp.Seq, pp.Ack, pp.PayloadLen = t.Seq, t.Ack, len(p.Payload)
	switch {
	case t.Flags.Has(packet.TCPFlagSYN | packet.TCPFlagACK):
		pp.Type = probes.PacketSYNACK
	case t.Flags.Has(packet.TCPFlagSYN):
		pp.Type = probes.PacketSYN
	case pp.PayloadLen > 0:
		pp.Type = probes.PacketData
	case t.Flags.Has(packet.TCPFlagACK):
		pp.Type = probes.PacketACK
	default:
		return pp, fmt.Errorf("probe host: TCP flags %#x are no probe segment", uint16(t.Flags))
	}
	return pp, nil
}

// probeHost attaches a probe-side receiver to host h (every TCP port) and
// returns the Sender it sends through.
func (n *network) probeHost(h *netsim.Host, recv func(probes.ProbePacket)) (probes.Sender, error) {
	ep := netsim.EndpointFunc(func(p *packet.Packet, _ []byte) {
		pp, err := probeOf(p)
		if err != nil {
			n.errs = append(n.errs, fmt.Errorf("%s: %w", h.Name, err))
			return
		}
		recv(pp)
	})
	send, err := h.Attach(netsim.Binding{Proto: packet.IPProtocolTCP}, ep)
	if err != nil {
		return nil, err
	}
	var scratch packet.Packet
	return probes.SenderFunc(func(pp probes.ProbePacket) error {
		if err := fillTCP(&scratch, pp); err != nil {
			return err
		}
		return send(&scratch)
	}), nil
}

func (n *network) hosts() (client, server *netsim.Host) {
	return n.net.Hosts[n.clientIdx], n.net.Hosts[n.serverIdx]
}

// oneWay sets up §2.2's measurement: the client sends one packet per new
// flow at the rate; the server records when each arrives (Tt = Tr − Ts).
func (n *network) oneWay(sc Scenario, tuples []probes.FiveTuple) (func(*Outcome), error) {
	count := sc.Flows
	sent := make([]time.Time, count)
	got := make([]time.Time, count)
	index := make(map[probes.FiveTuple]int, count)
	for i, t := range tuples {
		index[t] = i
	}
	ch, sh := n.hosts()
	out, err := n.probeHost(ch, func(probes.ProbePacket) {})
	if err != nil {
		return nil, err
	}
	if _, err := n.probeHost(sh, func(p probes.ProbePacket) {
		if i, ok := index[p.Tuple]; ok && got[i].IsZero() {
			got[i] = n.clk.Now()
		}
	}); err != nil {
		return nil, err
	}
	start := n.clk.Now()
	for i := range count {
		at := start.Add(time.Duration(math.Round(float64(i) * float64(time.Second) / sc.Rate)))
		n.clk.At(at, func() {
			sent[i] = n.clk.Now()
			p := probes.ProbePacket{Type: probes.PacketData, Tuple: tuples[i], Index: i,
				Seq: uint32(i), PayloadLen: probes.DefaultPayloadLen, SentAt: sent[i]}
			if err := out.Send(p); err != nil {
				n.errs = append(n.errs, err)
			}
		})
	}
	return func(o *Outcome) {
		o.Delays = make([]time.Duration, count)
		o.Delivered = make([]bool, count)
		for i := range count {
			if !got[i].IsZero() {
				o.Delays[i] = got[i].Sub(sent[i])
				o.Delivered[i] = true
			}
		}
	}, nil
}

// probe sets up §3's measurement with the probes package: the client is a
// SYN or data prober, the server the responder that answers at once.
func (n *network) probe(sc Scenario, tuples []probes.FiveTuple) (func(*Outcome), error) {
	cfg := probes.Config{Count: sc.Flows, Rate: sc.Rate, Tuples: tuples, Seed: sc.Seed, Profile: sc.Timers}
	ch, sh := n.hosts()
	var pr *probes.Probe
	out, err := n.probeHost(ch, func(p probes.ProbePacket) { pr.Deliver(p) })
	if err != nil {
		return nil, err
	}
	if sc.Kind == Handshake {
		pr, err = probes.NewSYNProbe(n.clk, out, cfg)
	} else {
		pr, err = probes.NewDataProbe(n.clk, out, cfg)
	}
	if err != nil {
		return nil, err
	}
	var resp *probes.Responder
	back, err := n.probeHost(sh, func(p probes.ProbePacket) { resp.Deliver(p) })
	if err != nil {
		return nil, err
	}
	if resp, err = probes.NewResponder(n.clk, back, nil); err != nil {
		return nil, err
	}
	if err := pr.Start(); err != nil {
		return nil, err
	}
	return func(o *Outcome) {
		rs := pr.Results()
		o.Delays = make([]time.Duration, len(rs))
		o.Delivered = make([]bool, len(rs))
		for i, r := range rs {
			o.Delays[i], o.Delivered[i] = r.RTT, r.Answered
		}
	}, nil
}

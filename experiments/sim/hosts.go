package sim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/probes"
	"github.com/pseudocong/pseudocong/softswitch"
)

// hosts wires NIC A (port 1) and NIC B (port 2) to the switch through
// links of a fixed latency, turning probe packets into frames and back.
type hosts struct {
	clk      *clock.Sim
	sw       *softswitch.Switch
	latency  time.Duration
	frameErr error
	recv     map[uint16]func(probes.ProbePacket)
	// Ignored counts frames a host stack dropped as not TCP/IPv4 (the
	// other host's ARP announcement, flooded).
	ignored int
}

// addPorts gives the switch its two ports; a frame the switch transmits
// reaches the host's stack after the link latency.
func (h *hosts) addPorts() error {
	h.recv = map[uint16]func(probes.ProbePacket){}
	for _, p := range []struct {
		no   uint16
		name string
	}{{portA, "nic-a"}, {portB, "nic-b"}} {
		no := p.no
		port := softswitch.NewMemPort(no, p.name, softswitch.MemPortMAC(1, no), func(frame []byte) {
			h.clk.AfterFunc(h.latency, func() { h.host(no, frame) })
		})
		if err := h.sw.AddPort(port); err != nil {
			return fmt.Errorf("sim: %w", err)
		}
	}
	return nil
}

// host is the receiving stack behind a port.
func (h *hosts) host(port uint16, frame []byte) {
	if len(frame) < ethHeaderLen || binary.BigEndian.Uint16(frame[12:14]) != etherTypeIPv4 {
		h.ignored++
		return
	}
	p, err := DecodeFrame(frame)
	if err != nil {
		h.frameErr = errors.Join(h.frameErr, fmt.Errorf("port %d: %w", port, err))
		return
	}
	if recv := h.recv[port]; recv != nil {
		recv(p)
	}
}

// announce makes each host send one gratuitous ARP, as hosts do when
// their link comes up, so the controller's reactive app learns where
// both MACs are (it floods these, installing nothing).
func (h *hosts) announce() {
	for _, a := range []struct {
		port uint16
		ip   netip.Addr
	}{{portA, HostA}, {portB, HostB}} {
		frame := gratuitousARP(a.ip)
		h.clk.AfterFunc(h.latency, func() { h.sw.Receive(a.port, frame) })
	}
}

// gratuitousARP is an ARP request for the sender's own address, broadcast.
func gratuitousARP(ip netip.Addr) []byte {
	mac, a := MACFor(ip), ip.As4()
	f := make([]byte, 42)
	copy(f[0:6], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	copy(f[6:12], mac[:])
	binary.BigEndian.PutUint16(f[12:14], 0x0806)
	arp := f[14:]
	binary.BigEndian.PutUint16(arp[0:2], 1)      // Ethernet
	binary.BigEndian.PutUint16(arp[2:4], 0x0800) // IPv4
	arp[4], arp[5] = 6, 4
	binary.BigEndian.PutUint16(arp[6:8], 1) // request
	copy(arp[8:14], mac[:])
	copy(arp[14:18], a[:])
	copy(arp[24:28], a[:])
	return f
}

// link returns a Sender that encodes packets into frames and delivers them
// to the switch port after the link latency.
func (h *hosts) toSwitch(port uint16) probes.Sender {
	return probes.SenderFunc(func(p probes.ProbePacket) error {
		frame, err := EncodeFrame(p)
		if err != nil {
			return err
		}
		h.clk.AfterFunc(h.latency, func() { h.sw.Receive(port, frame) })
		return nil
	})
}

// attach hands packets arriving at the host behind port to recv.
func (h *hosts) attach(port uint16, recv func(probes.ProbePacket)) { h.recv[port] = recv }

// oneWay sets up §2.2's measurement: NIC A sends one packet per new flow at
// the rate; NIC B records when each arrives (Tt = Tr − Ts).
func (h *hosts) oneWay(sc Scenario, tuples []probes.FiveTuple) (func(*Outcome), error) {
	n := sc.Flows
	sent := make([]time.Time, n)
	got := make([]time.Time, n)
	index := make(map[probes.FiveTuple]int, n)
	for i, t := range tuples {
		index[t] = i
	}
	h.attach(portA, func(probes.ProbePacket) {})
	h.attach(portB, func(p probes.ProbePacket) {
		if i, ok := index[p.Tuple]; ok && got[i].IsZero() {
			got[i] = h.clk.Now()
		}
	})
	out := h.toSwitch(portA)
	start := h.clk.Now()
	for i := range n {
		at := start.Add(time.Duration(math.Round(float64(i) * float64(time.Second) / sc.Rate)))
		h.clk.At(at, func() {
			sent[i] = h.clk.Now()
			p := probes.ProbePacket{Type: probes.PacketData, Tuple: tuples[i], Index: i,
				Seq: uint32(i), PayloadLen: probes.DefaultPayloadLen, SentAt: sent[i]}
			if err := out.Send(p); err != nil {
				h.frameErr = errors.Join(h.frameErr, err)
			}
		})
	}
	return func(o *Outcome) {
		o.Delays = make([]time.Duration, n)
		o.Delivered = make([]bool, n)
		for i := range n {
			if !got[i].IsZero() {
				o.Delays[i] = got[i].Sub(sent[i])
				o.Delivered[i] = true
			}
		}
	}, nil
}

// probe sets up §3's measurement with the probes package: NIC A is a SYN
// or data prober, NIC B the responder that answers at once.
func (h *hosts) probe(sc Scenario, tuples []probes.FiveTuple) (func(*Outcome), error) {
	cfg := probes.Config{Count: sc.Flows, Rate: sc.Rate, Tuples: tuples, Seed: sc.Seed, Profile: sc.Timers}
	var (
		pr  *probes.Probe
		err error
	)
	if sc.Kind == Handshake {
		pr, err = probes.NewSYNProbe(h.clk, h.toSwitch(portA), cfg)
	} else {
		pr, err = probes.NewDataProbe(h.clk, h.toSwitch(portA), cfg)
	}
	if err != nil {
		return nil, err
	}
	resp, err := probes.NewResponder(h.clk, h.toSwitch(portB), nil)
	if err != nil {
		return nil, err
	}
	h.attach(portA, pr.Deliver)
	h.attach(portB, resp.Deliver)
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

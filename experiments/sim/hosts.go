package sim

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/probes"
	"github.com/pseudocong/pseudocong/softswitch/flowtable"
)

func matchOf(frame []byte, inPort uint16) openflow.Match {
	f, _ := flowtable.Extract(frame, inPort)
	return flowtable.MatchFromFields(f)
}

// hosts wires NIC A (port 1) and NIC B (port 2) to the switch through
// links of a fixed latency, turning probe packets into frames and back.
type hosts struct {
	clk      *clock.Sim
	sw       *simSwitch
	latency  time.Duration
	frameErr error
}

// link returns a Sender that encodes packets into frames and delivers them
// to the switch port after the link latency.
func (h *hosts) toSwitch(port uint16) probes.Sender {
	return probes.SenderFunc(func(p probes.ProbePacket) error {
		frame, err := EncodeFrame(p)
		if err != nil {
			return err
		}
		h.clk.AfterFunc(h.latency, func() { h.sw.receive(port, frame) })
		return nil
	})
}

// attach makes switch output on port reach a host's stack after the link
// latency; the stack decodes the frame and hands it to recv.
func (h *hosts) attach(port uint16, recv func(probes.ProbePacket)) {
	h.sw.attach(port, func(frame []byte) {
		h.clk.AfterFunc(h.latency, func() {
			p, err := DecodeFrame(frame)
			if err != nil {
				h.frameErr = errors.Join(h.frameErr, fmt.Errorf("port %d: %w", port, err))
				return
			}
			recv(p)
		})
	})
}

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

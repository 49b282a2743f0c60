package live

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/pseudocong/pseudocong/experiments/sim"
	"github.com/pseudocong/pseudocong/probes"
	plive "github.com/pseudocong/pseudocong/probes/live"
)

// oneWayIdle is how long a one-way cell waits, after the last send, for
// a packet that has not arrived while nothing else arrives either.
const oneWayIdle = 20 * time.Second

// arrivals records, per flow, when its packet first reached host 2 (the
// kernel's receive timestamp of the frame).
type arrivals struct {
	mu    sync.Mutex
	index map[probes.FiveTuple]int
	got   []time.Time
	n     int
	last  time.Time // wall time of the last new arrival
}

func (a *arrivals) Deliver(p probes.ProbePacket) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if i, ok := a.index[p.Tuple]; ok && a.got[i].IsZero() {
		a.got[i] = p.SentAt // the endpoint stamps received packets with their receive time
		a.n++
		a.last = time.Now()
	}
}

func (a *arrivals) progress() (int, time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n, a.last
}

// oneWay measures a packet_in cell the paper's way (§2.2, Fig. 3): host 1
// sends one data packet per new flow at Rate, host 2 records its arrival,
// delay Tt = Tr − Ts on the one clock both hosts share (they are
// namespaces of one kernel). Every packet misses the table, so the send
// rate is the Packet-In rate.
func (r *runner) oneWay(ctx context.Context, c Cell) (*sim.Outcome, error) {
	h1, h2 := r.topo.Hosts[0], r.topo.Hosts[1]
	src, dst := plive.DefaultSrc, plive.DefaultDst
	tuples, err := probes.GenerateTuples(c.Flows, probes.TupleSpec{Src: src, Dst: dst, DstPort: plive.DefaultDstPort}, r.cfg.Seed)
	if err != nil {
		return nil, err
	}
	recv := &arrivals{index: make(map[probes.FiveTuple]int, len(tuples)), got: make([]time.Time, len(tuples))}
	for i, t := range tuples {
		recv.index[t] = i
	}
	rx, err := plive.OpenEndpoint(plive.EndpointConfig{Netns: h2.Netns, Iface: h2.Iface, Addrs: []netip.Addr{dst}, Logger: r.cfg.Logger})
	if err != nil {
		return nil, fmt.Errorf("receiver: %w", err)
	}
	defer rx.Close()
	rx.Start(recv)
	tx, err := plive.OpenEndpoint(plive.EndpointConfig{Netns: h1.Netns, Iface: h1.Iface, Addrs: []netip.Addr{src}, Logger: r.cfg.Logger})
	if err != nil {
		return nil, fmt.Errorf("sender: %w", err)
	}
	defer tx.Close()
	tx.Start(nil)
	// The ARP exchange also teaches the reactive controller both MACs, as
	// the sim's gratuitous ARPs do, before the first measured packet.
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	_, err = tx.Resolve(rctx, dst, src)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("resolve %s from %s: %w", dst, h1.Netns, err)
	}

	sent := make([]time.Time, len(tuples))
	start := time.Now()
	for i, t := range tuples {
		at := start.Add(time.Duration(float64(i) * float64(time.Second) / c.Rate))
		if d := time.Until(at); d > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(d):
			}
		}
		sent[i] = time.Now()
		p := probes.ProbePacket{Type: probes.PacketData, Tuple: t, Index: i, Seq: uint32(i),
			PayloadLen: probes.DefaultPayloadLen, SentAt: sent[i]}
		if err := tx.Send(p); err != nil {
			return nil, fmt.Errorf("send flow %d: %w", i, err)
		}
	}
	lastSend := time.Now()
	for {
		n, last := recv.progress()
		if n == len(tuples) {
			break
		}
		if time.Since(maxTime(last, lastSend)) > oneWayIdle {
			break // the rest is lost (counted undelivered)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}

	o := &sim.Outcome{Delays: make([]time.Duration, len(tuples)), Delivered: make([]bool, len(tuples))}
	recv.mu.Lock()
	defer recv.mu.Unlock()
	for i := range tuples {
		if got := recv.got[i]; !got.IsZero() {
			o.Delays[i] = got.Sub(sent[i])
			o.Delivered[i] = true
		}
	}
	return o, nil
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

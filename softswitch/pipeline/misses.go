package pipeline

import (
	"time"

	"github.com/pseudocong/pseudocong/agent"
	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/softswitch"
)

// dropUpcallFull: more misses on their way to the CPU than
// Options.DelayLineLimit (upcall latency only).
const dropUpcallFull = "upcall_full"

// upcallItem is a miss on its way to the CPU (profile upcall).
type upcallItem struct {
	m   softswitch.Miss
	due time.Time
}

// HandleMiss implements softswitch.MissHandler: the miss goes to the local
// CPU, after the profile's upcall latency (0 unless set: at once). If the
// agent refuses it (miss queue full), the packet's buffer is freed; the
// agent counts the drop.
func (p *Pipeline) HandleMiss(m softswitch.Miss) {
	u := p.prof.Upcall
	if u.Latency <= 0 && u.IdleLatency <= 0 {
		p.toAgent(m)
		return
	}
	p.mu.Lock()
	if p.stopped || len(p.upcalls) >= p.opts.DelayLineLimit {
		if !p.stopped {
			p.dropLocked(dropUpcallFull)
		}
		p.mu.Unlock()
		p.sw.DropPacketIn(m.PacketIn)
		return
	}
	gap := time.Duration(-1)
	if !p.lastMiss.IsZero() {
		gap = m.At.Sub(p.lastMiss)
	}
	p.lastMiss = m.At
	// In order: one thread handles the misses, so one that arrives while
	// an earlier one is still on its way is handed on after it. One timer
	// serves the queue (armed for its head), so on the wall clock, too,
	// no miss overtakes another.
	at := m.At.Add(u.Delay(gap))
	if n := len(p.upcalls); n > 0 && at.Before(p.upcalls[n-1].due) {
		at = p.upcalls[n-1].due
	}
	p.upcalls = append(p.upcalls, upcallItem{m: m, due: at})
	p.armUpcallLocked()
	p.mu.Unlock()
}

// armUpcallLocked makes sure a timer fires when the head of the upcall
// queue is due, unless a delivery loop is running (it re-arms).
func (p *Pipeline) armUpcallLocked() {
	if p.upcallTimer != nil || p.upcallDraining || len(p.upcalls) == 0 || p.stopped {
		return
	}
	p.upcallTimer = p.clk.AfterFunc(p.upcalls[0].due.Sub(p.clk.Now()), p.fireUpcalls)
}

// fireUpcalls hands every due miss to the CPU, in order, without holding
// the lock while the agent takes it.
func (p *Pipeline) fireUpcalls() {
	p.mu.Lock()
	p.upcallTimer = nil
	if p.upcallDraining {
		p.mu.Unlock()
		return
	}
	p.upcallDraining = true
	for !p.stopped && len(p.upcalls) > 0 && !p.upcalls[0].due.After(p.clk.Now()) {
		it := p.upcalls[0]
		p.upcalls[0] = upcallItem{}
		p.upcalls = p.upcalls[1:]
		p.mu.Unlock()
		p.toAgent(it.m)
		p.mu.Lock()
	}
	p.upcallDraining = false
	p.armUpcallLocked()
	p.mu.Unlock()
}

// toAgent hands a miss to the local CPU.
func (p *Pipeline) toAgent(m softswitch.Miss) {
	pi := m.PacketIn
	ok := p.agent.Miss(agent.PacketIn{
		Data:     pi.Data,
		TotalLen: pi.TotalLen,
		InPort:   pi.InPort,
		BufferID: pi.BufferID,
		Reason:   pi.Reason,
		MissAt:   m.At,
		Cookie:   pi,
	})
	if !ok {
		p.sw.DropPacketIn(pi)
	}
}

// agentOutput delivers the agent's batches to the switch, and frees the
// buffers of Packet-Ins the agent discards later.
type agentOutput struct{ p *Pipeline }

// SendPacketIns implements agent.Output.
func (o agentOutput) SendPacketIns(batch []agent.PacketIn) {
	for _, a := range batch {
		o.p.sw.SendPacketIn(a.Cookie.(*openflow.PacketIn))
	}
}

// PacketInDropped implements agent.DropHandler.
func (o agentOutput) PacketInDropped(a agent.PacketIn, _ agent.DropReason) {
	o.p.sw.DropPacketIn(a.Cookie.(*openflow.PacketIn))
}

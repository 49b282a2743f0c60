package pipeline

import (
	"time"

	"github.com/pseudocong/pseudocong/agent"
	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/softswitch"
)

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
	if p.stopped {
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
	// an earlier one is still on its way is handed on after it.
	at := m.At.Add(u.Delay(gap))
	if at.Before(p.upcallAt) {
		at = p.upcallAt
	}
	p.upcallAt = at
	p.mu.Unlock()
	p.clk.AfterFunc(at.Sub(p.clk.Now()), func() {
		p.mu.Lock()
		stopped := p.stopped
		p.mu.Unlock()
		if stopped {
			p.sw.DropPacketIn(m.PacketIn)
			return
		}
		p.toAgent(m)
	})
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

package pipeline

import (
	"github.com/pseudocong/pseudocong/agent"
	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/softswitch"
)

// HandleMiss implements softswitch.MissHandler: the miss goes to the local
// CPU. If the agent refuses it at once (miss queue full), the packet's
// buffer is freed; the agent counts the drop.
func (p *Pipeline) HandleMiss(m softswitch.Miss) {
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

package softswitch

import "github.com/pseudocong/pseudocong/openflow"

// The ideal seams: zero modelled delay, as profile "ideal" asks.

// IdealMissHandler sends every PACKET_IN at once.
type IdealMissHandler struct{ Switch *Switch }

// HandleMiss implements MissHandler.
func (h IdealMissHandler) HandleMiss(m Miss) { h.Switch.SendPacketIn(m.PacketIn) }

// IdealInstaller applies every FLOW_MOD and answers every BARRIER at once.
type IdealInstaller struct{ Switch *Switch }

// Install implements Installer.
func (i IdealInstaller) Install(ch Channel, fm *openflow.FlowMod) { i.Switch.ApplyFlowMod(ch, fm) }

// Barrier implements Installer.
func (i IdealInstaller) Barrier(ch Channel, req *openflow.BarrierRequest) {
	i.Switch.ReplyBarrier(ch, req.Xid)
}

// IdealForwarder runs a hit's actions at once.
type IdealForwarder struct{ Switch *Switch }

// Forward implements Forwarder.
func (f IdealForwarder) Forward(h Hit) { f.Switch.Deliver(h) }

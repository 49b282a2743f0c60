package softswitch

import (
	"time"

	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/tcam"
)

// Miss is a packet on its way to the controller: a table miss (reason
// NO_MATCH) or an OUTPUT:CONTROLLER action (reason ACTION).
type Miss struct {
	// PacketIn is ready to send: buffer id allocated (or NoBuffer), data
	// truncated to miss_send_len / max_len, reason set.
	PacketIn *openflow.PacketIn
	// Fields is the packet's 12-tuple.
	Fields tcam.Fields
	// At is when the packet arrived (when the miss happened).
	At time.Time
}

// MissHandler is seam (a): every PACKET_IN the data path produces goes
// through it. The ideal handler sends it at once (Switch.SendPacketIn); a
// modelled one (the local-CPU agent) queues, batches and rate-limits it,
// then calls Switch.SendPacketIn, or Switch.DropPacketIn to free its
// buffer. HandleMiss is called without the switch lock held.
type MissHandler interface {
	HandleMiss(m Miss)
}

// Installer is seam (b): every validated FLOW_MOD and every BARRIER goes
// through it, in arrival order per channel. The ideal installer applies a
// FLOW_MOD at once (Switch.ApplyFlowMod) and answers a BARRIER at once
// (Switch.ReplyBarrier). A modelled one applies FLOW_MODs after their CPU
// cost; it must then answer a BARRIER only after every FLOW_MOD received
// before it on that channel has been applied (OpenFlow's barrier
// ordering). Methods are called without the switch lock held.
type Installer interface {
	Install(ch Channel, fm *openflow.FlowMod)
	Barrier(ch Channel, req *openflow.BarrierRequest)
}

// Hit is a packet that hit a flow entry, with the actions to apply. The
// entry's counters have already been updated.
type Hit struct {
	InPort  uint16
	Frame   []byte
	Fields  tcam.Fields
	EntryID uint64
	// Priority is the entry's effective (classifier) priority.
	Priority uint32
	Actions  []openflow.Action
	At       time.Time
}

// Forwarder is seam (c): every table hit goes through it before its
// actions run. The ideal forwarder delivers at once (Switch.Deliver); a
// modelled one holds the frame for the profile's hit delay on the clock,
// then calls Switch.Deliver. Forward is called without the switch lock.
type Forwarder interface {
	Forward(h Hit)
}

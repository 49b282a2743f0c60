package agent

import "time"

// PacketIn is a table miss on its way to the controller. The agent only
// reads the time stamps; the other fields are carried for the shell that
// encodes the OpenFlow message.
type PacketIn struct {
	Data     []byte // the packet (or its first miss_send_len bytes)
	TotalLen uint16 // length of the whole frame
	InPort   uint16
	BufferID uint32
	Reason   uint8
	// MissAt is when the miss happened; Miss stamps Now() if it is zero.
	MissAt time.Time
	// BuiltAt is when the CPU finished building the Packet-In (set by the
	// agent).
	BuiltAt time.Time
	// Cookie is opaque to the agent (e.g. the switch's pending-packet
	// handle).
	Cookie any
}

// Output receives the batches the agent sends to the controller.
type Output interface {
	// SendPacketIns gets one batch in miss order. The slice is the
	// callee's to keep; the agent never touches it again.
	SendPacketIns(batch []PacketIn)
}

// OutputFunc adapts a function to Output.
type OutputFunc func(batch []PacketIn)

// SendPacketIns calls f(batch).
func (f OutputFunc) SendPacketIns(batch []PacketIn) { f(batch) }

// DropHandler is optionally implemented by the Output. It learns about
// every Packet-In that Miss accepted (returned true) and the agent later
// discarded, so the switch can release a buffered packet. A miss refused by
// Miss (false) is not reported again.
type DropHandler interface {
	PacketInDropped(p PacketIn, reason DropReason)
}

// DropReason says why the agent discarded work.
type DropReason string

const (
	// DropMissQueueFull: the miss queue (MissQueueLimit) was full.
	DropMissQueueFull DropReason = "miss_queue_full"
	// DropRateLimited: no token and the rate-limit queue
	// (controller_burst_limit) was full.
	DropRateLimited DropReason = "rate_limited"
	// DropJobQueueFull: the job queue (JobQueueLimit) was full.
	DropJobQueueFull DropReason = "job_queue_full"
	// DropStopped: the agent was stopped.
	DropStopped DropReason = "stopped"
)

// DropReasons lists every reason, for metrics pre-initialisation and tests.
var DropReasons = []DropReason{DropMissQueueFull, DropRateLimited, DropJobQueueFull, DropStopped}

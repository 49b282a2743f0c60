package netsim

import (
	"unsafe"

	"github.com/pseudocong/pseudocong/internal/prefetch"
)

// prefetchPacket asks for the three cache lines from p on. A model's
// descriptor usually embeds the Packet first and what it carries (a TCP
// segment) right after it, which the far end reads on delivery: 128
// bytes for experiments/highbdp, two lines when the descriptor starts on
// a line, three when it does not.
func prefetchPacket(p *Packet) { prefetch.Lines(unsafe.Pointer(p), 3) }

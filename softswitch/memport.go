package softswitch

import (
	"errors"
	"sync"
)

// MemPort is an in-memory port: Transmit hands frames to a function (a
// link to another switch or host in a test or the simulator) or, without
// one, keeps them in a bounded list that tests read with Take.
type MemPort struct {
	no      uint16
	name    string
	hwaddr  [6]byte
	deliver func(frame []byte)

	mu      sync.Mutex
	limit   int
	frames  [][]byte
	dropped uint64
}

// ErrPortQueueFull is returned by MemPort.Transmit when its list is full.
var ErrPortQueueFull = errors.New("softswitch: port queue full")

// NewMemPort returns a port that passes every transmitted frame to deliver
// (nil: keep up to 4096 frames for Take).
func NewMemPort(no uint16, name string, hwaddr [6]byte, deliver func(frame []byte)) *MemPort {
	return &MemPort{no: no, name: name, hwaddr: hwaddr, deliver: deliver, limit: 4096}
}

// No implements Port.
func (p *MemPort) No() uint16 { return p.no }

// Name implements Port.
func (p *MemPort) Name() string { return p.name }

// HWAddr implements Port.
func (p *MemPort) HWAddr() [6]byte { return p.hwaddr }

// Transmit implements Port.
func (p *MemPort) Transmit(frame []byte) error {
	if p.deliver != nil {
		p.deliver(frame)
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.frames) >= p.limit {
		p.dropped++
		return ErrPortQueueFull
	}
	p.frames = append(p.frames, frame)
	return nil
}

// Take returns and forgets the frames transmitted so far.
func (p *MemPort) Take() [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.frames
	p.frames = nil
	return f
}

// MemPortMAC is a locally administered MAC for in-memory port no of
// datapath dpid, so that ports of several switches in one simulation
// differ.
func MemPortMAC(dpid uint64, no uint16) [6]byte {
	return [6]byte{0x02, byte(dpid >> 16), byte(dpid >> 8), byte(dpid), byte(no >> 8), byte(no)}
}

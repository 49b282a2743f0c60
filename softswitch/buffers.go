package softswitch

import (
	"math/bits"
	"time"

	"github.com/pseudocong/pseudocong/openflow"
)

// bufferStore keeps packets sent to the controller with a buffer_id, as
// OpenFlow 1.0 switches do. A fixed number of slots; a buffer id is
// (generation << slotBits) | slot, and a slot's generation advances each
// time it is reused, so a stale id (the slot was reused meanwhile) is told
// apart from a valid one: BUFFER_UNKNOWN. An id whose packet was already
// released is BUFFER_EMPTY. A slot is free when released or older than the
// lifetime (Open vSwitch overwrites buffers after 5 s too).
type bufferStore struct {
	slots    []bufferSlot
	slotBits uint
	next     int
	lifetime time.Duration
}

type bufferSlot struct {
	gen    uint32
	used   bool
	inPort uint16
	frame  []byte
	at     time.Time
}

func newBufferStore(n int, lifetime time.Duration) *bufferStore {
	b := &bufferStore{slots: make([]bufferSlot, n), lifetime: lifetime}
	if n > 1 {
		b.slotBits = uint(bits.Len(uint(n - 1)))
	}
	return b
}

// size is n_buffers.
func (b *bufferStore) size() int { return len(b.slots) }

// genMask keeps ids below 2^31, far from OFP_NO_BUFFER (0xffffffff).
func (b *bufferStore) genMask() uint32 { return (1 << (31 - b.slotBits)) - 1 }

// save stores frame and returns its id, or NoBuffer when every slot is in
// use and younger than the lifetime.
func (b *bufferStore) save(frame []byte, inPort uint16, now time.Time) uint32 {
	for range len(b.slots) {
		i := b.next
		b.next = (b.next + 1) % len(b.slots)
		s := &b.slots[i]
		if s.used && now.Sub(s.at) < b.lifetime {
			continue
		}
		s.gen = (s.gen + 1) & b.genMask()
		s.used, s.inPort, s.frame, s.at = true, inPort, frame, now
		return s.gen<<b.slotBits | uint32(i)
	}
	return openflow.NoBuffer
}

// take removes and returns the packet with the given id.
func (b *bufferStore) take(id uint32) (frame []byte, inPort uint16, code openflow.BadRequestCode, ok bool) {
	i := int(id & (1<<b.slotBits - 1))
	if len(b.slots) == 0 || i >= len(b.slots) || id>>b.slotBits != b.slots[i].gen || id > 1<<31 {
		return nil, 0, openflow.BadRequestBufferUnknown, false
	}
	s := &b.slots[i]
	if !s.used {
		return nil, 0, openflow.BadRequestBufferEmpty, false
	}
	frame, inPort = s.frame, s.inPort
	s.used, s.frame = false, nil
	return frame, inPort, 0, true
}

// release frees a buffer without using it (the PACKET_IN was dropped).
func (b *bufferStore) release(id uint32) { _, _, _, _ = b.take(id) }

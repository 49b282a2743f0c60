package sim

import (
	"fmt"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/openflow"
)

// Channel is one direction of the simulated control channel. Send encodes
// the message to OpenFlow 1.0 bytes; after the modelled latency the bytes
// are decoded into a fresh message and handed to the receiver. Nothing but
// bytes crosses, so every simulated run exercises the codec both ways, as
// the TCP connection of a live run does.
//
// Messages keep their order: they all take the same latency, and the
// virtual clock breaks ties by scheduling order.
type Channel struct {
	clk     *clock.Sim
	latency time.Duration
	recv    func(openflow.Message)
	filter  func(wire []byte) (bool, error)
	onErr   func(error)
	stats   ChannelStats
	buf     []byte
}

// ChannelStats counts what crossed a channel.
type ChannelStats struct {
	Messages uint64
	Bytes    uint64
	ByType   map[openflow.Type]uint64
	// DecodeErrors counts byte strings the receiving end could not decode
	// (a codec bug: the sender produced them).
	DecodeErrors uint64
}

// NewChannel returns a channel delivering to recv after latency. onErr,
// if set, hears about decode errors (which are also counted).
func NewChannel(clk *clock.Sim, latency time.Duration, recv func(openflow.Message), onErr func(error)) *Channel {
	return &Channel{clk: clk, latency: latency, recv: recv, onErr: onErr,
		stats: ChannelStats{ByType: map[openflow.Type]uint64{}}}
}

// SetReceiver replaces the receiving end (for wiring cores that need each
// other's channels at construction).
func (c *Channel) SetReceiver(recv func(openflow.Message)) { c.recv = recv }

// SetFilter puts f in front of the receiver: f sees each frame first
// (the receiving end's openflow.Channel.Receive, which consumes the
// handshake's messages) and reports whether the receiver gets it.
func (c *Channel) SetFilter(f func(wire []byte) (bool, error)) { c.filter = f }

// Send encodes m now and schedules its decoding at the far end.
func (c *Channel) Send(m openflow.Message) error {
	var err error
	c.buf, err = m.AppendBinary(c.buf[:0])
	if err != nil {
		return fmt.Errorf("sim channel: encode %v: %w", m.MsgType(), err)
	}
	wire := append([]byte(nil), c.buf...) // the bytes in flight are the receiver's
	c.stats.Messages++
	c.stats.Bytes += uint64(len(wire))
	c.stats.ByType[m.MsgType()]++
	c.clk.AfterFunc(c.latency, func() { c.deliver(wire) })
	return nil
}

// SendBytes puts raw bytes on the channel, as a misbehaving peer might.
func (c *Channel) SendBytes(wire []byte) {
	wire = append([]byte(nil), wire...)
	c.stats.Messages++
	c.stats.Bytes += uint64(len(wire))
	c.clk.AfterFunc(c.latency, func() { c.deliver(wire) })
}

func (c *Channel) deliver(wire []byte) {
	if c.filter != nil {
		deliver, err := c.filter(wire)
		if err != nil && c.onErr != nil {
			c.onErr(fmt.Errorf("sim channel: %w", err))
		}
		if !deliver {
			return
		}
	}
	m, err := openflow.Unmarshal(wire)
	if err != nil {
		c.stats.DecodeErrors++
		if c.onErr != nil {
			c.onErr(fmt.Errorf("sim channel: decode %d bytes: %w", len(wire), err))
		}
		return
	}
	if c.recv != nil {
		c.recv(m)
	}
}

// Stats returns the counters (the map is a copy).
func (c *Channel) Stats() ChannelStats {
	s := c.stats
	s.ByType = make(map[openflow.Type]uint64, len(c.stats.ByType))
	for k, v := range c.stats.ByType {
		s.ByType[k] = v
	}
	return s
}

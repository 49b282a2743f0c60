package controller

import (
	"encoding/binary"
	"sync"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/openflow"
)

// fakeSwitch records what the core sends, decoded from the bytes Send
// produced, so tests see exactly what would go on the wire.
type fakeSwitch struct {
	dpid     uint64
	features openflow.FeaturesReply
	mu       sync.Mutex
	sent     []openflow.Message
}

func newFakeSwitch(dpid uint64) *fakeSwitch {
	return &fakeSwitch{dpid: dpid, features: openflow.FeaturesReply{DatapathID: dpid, NBuffers: 256}}
}

func (f *fakeSwitch) DPID() uint64                      { return f.dpid }
func (f *fakeSwitch) Features() *openflow.FeaturesReply { return &f.features }

func (f *fakeSwitch) Send(m openflow.Message) error {
	b, err := openflow.Marshal(m)
	if err != nil {
		return err
	}
	back, err := openflow.Unmarshal(b)
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.sent = append(f.sent, back)
	f.mu.Unlock()
	return nil
}

// take returns and forgets what was sent so far.
func (f *fakeSwitch) take() []openflow.Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.sent
	f.sent = nil
	return s
}

type mac = [6]byte

var (
	macA  = mac{0, 0, 0, 0, 0, 0xa}
	macB  = mac{0, 0, 0, 0, 0, 0xb}
	macC  = mac{0, 0, 0, 0, 0, 0xc}
	bcast = mac{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
)

// frame builds an Ethernet frame of the given type and payload, padded to
// 60 bytes like a real minimum frame.
func frame(dst, src mac, ethType uint16, payload []byte) []byte {
	b := append(append(append([]byte{}, dst[:]...), src[:]...), byte(ethType>>8), byte(ethType))
	b = append(b, payload...)
	for len(b) < 60 {
		b = append(b, 0)
	}
	return b
}

// ipv4 builds an IPv4 header (no options) followed by l4.
func ipv4(proto uint8, src, dst uint32, l4 []byte) []byte {
	h := make([]byte, 20)
	h[0] = 0x45
	binary.BigEndian.PutUint16(h[2:], uint16(20+len(l4)))
	h[8] = 64
	h[9] = proto
	binary.BigEndian.PutUint32(h[12:], src)
	binary.BigEndian.PutUint32(h[16:], dst)
	return append(h, l4...)
}

func ports(src, dst uint16) []byte {
	b := make([]byte, 20)
	binary.BigEndian.PutUint16(b[0:], src)
	binary.BigEndian.PutUint16(b[2:], dst)
	return b
}

func tcpFrame(dst, src mac, nwSrc, nwDst uint32, tpSrc, tpDst uint16) []byte {
	return frame(dst, src, 0x0800, ipv4(6, nwSrc, nwDst, ports(tpSrc, tpDst)))
}

func packetIn(xid, bufferID uint32, inPort uint16, data []byte) *openflow.PacketIn {
	return &openflow.PacketIn{Header: openflow.Header{Version: 1, Xid: xid}, BufferID: bufferID,
		TotalLen: uint16(len(data)), InPort: inPort, Data: data}
}

// stepClock advances by step on every Now, so a handling time measured
// between two readings is exactly step.
type stepClock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(c.step)
	return c.now
}

func (c *stepClock) AfterFunc(time.Duration, func()) clock.Timer { panic("unused") }

func mustMetrics(t *testing.T) *Metrics {
	t.Helper()
	m, err := NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

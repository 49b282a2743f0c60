// Package pcapstream reassembles the TCP byte streams of a pcap file so
// tests can replay real protocol exchanges (OpenFlow captures of Open
// vSwitch, tshark-checked output of our own programs).
//
// It is deliberately simple: every segment of a direction is kept, ordered by
// sequence number relative to the SYN, and retransmitted or overlapping bytes
// are dropped. Gaps (lost segments) are reported as an error, since a test
// that silently skips bytes would misframe everything after them.
package pcapstream

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"slices"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Stream is the payload of one direction of one TCP connection.
type Stream struct {
	Src, Dst netip.AddrPort
	// Data is the reassembled payload in sequence order.
	Data []byte
	// Segments is how many payload-carrying segments contributed.
	Segments int
}

func (s *Stream) String() string {
	return fmt.Sprintf("%v->%v (%d bytes)", s.Src, s.Dst, len(s.Data))
}

type segment struct {
	seq  uint32
	data []byte
}

type flowKey struct {
	src, dst netip.AddrPort
}

type flow struct {
	key      flowKey
	isn      uint32
	haveSYN  bool
	segments []segment
}

// ReadFile reads a pcap or pcapng file and returns its TCP streams in
// order of first appearance. Directions that carried no payload are
// omitted. A new SYN on a 4-tuple starts a new stream.
func ReadFile(path string) ([]Stream, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f)
}

// packetSource is what both pcapgo readers offer.
type packetSource interface {
	ReadPacketData() ([]byte, gopacket.CaptureInfo, error)
	LinkType() layers.LinkType
}

// pcapngMagic is the block type of a pcapng Section Header Block.
var pcapngMagic = []byte{0x0a, 0x0d, 0x0d, 0x0a}

func openSource(r io.Reader) (packetSource, error) {
	br := bufio.NewReader(r)
	magic, err := br.Peek(4)
	if err != nil {
		return nil, fmt.Errorf("pcapstream: reading magic: %w", err)
	}
	if bytes.Equal(magic, pcapngMagic) {
		return pcapgo.NewNgReader(br, pcapgo.DefaultNgReaderOptions)
	}
	return pcapgo.NewReader(br)
}

// Read is ReadFile on an open reader; it accepts pcap and pcapng.
func Read(r io.Reader) ([]Stream, error) {
	pr, err := openSource(r)
	if err != nil {
		return nil, fmt.Errorf("pcapstream: %w", err)
	}
	var (
		order  []*flow
		active = map[flowKey]*flow{}
	)
	for {
		data, _, err := pr.ReadPacketData()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("pcapstream: reading packet %d: %w", len(order), err)
		}
		pkt := gopacket.NewPacket(data, pr.LinkType(), gopacket.DecodeOptions{Lazy: true, NoCopy: true})
		key, tcp, ok := tcpOf(pkt)
		if !ok {
			continue
		}
		fl := active[key]
		if tcp.SYN || fl == nil {
			fl = &flow{key: key}
			if tcp.SYN {
				fl.isn, fl.haveSYN = tcp.Seq, true
			}
			active[key] = fl
			order = append(order, fl)
		}
		if len(tcp.Payload) > 0 {
			if !fl.haveSYN {
				// Capture started mid-connection: take the first
				// segment as the origin.
				fl.isn, fl.haveSYN = tcp.Seq-1, true
			}
			fl.segments = append(fl.segments, segment{seq: tcp.Seq, data: slices.Clone(tcp.Payload)})
		}
	}
	var streams []Stream
	for _, fl := range order {
		if len(fl.segments) == 0 {
			continue
		}
		s, err := fl.reassemble()
		if err != nil {
			return nil, err
		}
		streams = append(streams, s)
	}
	return streams, nil
}

func tcpOf(pkt gopacket.Packet) (flowKey, *layers.TCP, bool) {
	tcp, ok := pkt.Layer(layers.LayerTypeTCP).(*layers.TCP)
	if !ok {
		return flowKey{}, nil, false
	}
	var src, dst netip.Addr
	switch ip := pkt.NetworkLayer().(type) {
	case *layers.IPv4:
		src, _ = netip.AddrFromSlice(ip.SrcIP.To4())
		dst, _ = netip.AddrFromSlice(ip.DstIP.To4())
	case *layers.IPv6:
		src, _ = netip.AddrFromSlice(ip.SrcIP)
		dst, _ = netip.AddrFromSlice(ip.DstIP)
	default:
		return flowKey{}, nil, false
	}
	return flowKey{
		src: netip.AddrPortFrom(src, uint16(tcp.SrcPort)),
		dst: netip.AddrPortFrom(dst, uint16(tcp.DstPort)),
	}, tcp, true
}

// reassemble orders the segments by offset from the ISN (so sequence
// wrap-around is harmless), drops bytes already seen and fails on gaps.
func (fl *flow) reassemble() (Stream, error) {
	off := func(s segment) uint32 { return s.seq - fl.isn - 1 }
	slices.SortStableFunc(fl.segments, func(a, b segment) int { return cmp.Compare(off(a), off(b)) })
	s := Stream{Src: fl.key.src, Dst: fl.key.dst}
	for _, seg := range fl.segments {
		o := int(off(seg))
		end := o + len(seg.data)
		switch {
		case o > len(s.Data):
			return Stream{}, fmt.Errorf("pcapstream: %v->%v: gap of %d bytes at offset %d",
				fl.key.src, fl.key.dst, o-len(s.Data), len(s.Data))
		case end <= len(s.Data):
			continue // pure retransmission
		}
		s.Data = append(s.Data, seg.data[len(s.Data)-o:]...)
		s.Segments++
	}
	return s, nil
}

// SplitOpenFlow cuts an OpenFlow byte stream into whole messages using the
// 16-bit length at offset 2 of every ofp_header (the same framing in every
// OpenFlow version). It stops at the first header whose length is below 8
// (framing is lost from there) and returns the messages before it, the
// unframed remainder, and an error. A truncated final message is returned
// as the remainder without error.
func SplitOpenFlow(data []byte) (msgs [][]byte, rest []byte, err error) {
	for len(data) >= 8 {
		n := int(data[2])<<8 | int(data[3])
		if n < 8 {
			return msgs, data, fmt.Errorf("pcapstream: ofp_header length %d < 8 at message %d", n, len(msgs))
		}
		if n > len(data) {
			break
		}
		msgs = append(msgs, data[:n:n])
		data = data[n:]
	}
	return msgs, data, nil
}

package calibrate

import (
	"encoding/binary"
	"fmt"
	"log/slog"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/pseudocong/pseudocong/internal/afsock"
	"github.com/pseudocong/pseudocong/packet"
)

// Probe frames are UDP/IPv4 with a payload calibrate recognises:
// magic, kind, sequence number. The source address names the rule a frame
// should match (probeIP); misses for the Packet-In tests use another /16
// (missIP) that calibrate's guard rule does not cover.
const (
	probeMagic    = 0x5043414c // "PCAL"
	probeUDPSrc   = 47777
	probeUDPDst   = 47778
	probeLen      = 14 + 20 + 8 + 16
	kindRule      = 1
	kindMiss      = 2
	kindDiscover  = 3
	kindPacketOut = 4
)

var (
	probeSrcMAC = [6]byte{0x02, 0xca, 0x1b, 0, 0, 1}
	probeDstMAC = [6]byte{0x02, 0xca, 0x1b, 0, 0, 2}
	probeDstIP  = [4]byte{10, 78, 0, 1}
)

// probeIP is the source address of rule id's probes: 10.77.x.y.
func probeIP(id int) uint32 { return 10<<24 | 77<<16 | uint32(id&0xffff) }

// missIP is the source address of miss k: 10.79.x.y.
func missIP(k int) uint32 { return 10<<24 | 79<<16 | uint32(k&0xffff) }

// encodeProbe appends one probe frame to b.
func encodeProbe(b []byte, src uint32, kind uint8, seq uint64) []byte {
	b = append(b, probeDstMAC[:]...)
	b = append(b, probeSrcMAC[:]...)
	b = binary.BigEndian.AppendUint16(b, 0x0800)
	ip := len(b)
	b = append(b, 0x45, 0)
	b = binary.BigEndian.AppendUint16(b, 20+8+16)
	b = append(b, 0, 0, 0x40, 0, 64, 17, 0, 0) // id, DF, ttl, UDP, csum
	b = binary.BigEndian.AppendUint32(b, src)
	b = append(b, probeDstIP[:]...)
	binary.BigEndian.PutUint16(b[ip+10:], packet.Checksum(b[ip:ip+20], 0))
	b = binary.BigEndian.AppendUint16(b, probeUDPSrc)
	b = binary.BigEndian.AppendUint16(b, probeUDPDst)
	b = binary.BigEndian.AppendUint16(b, 8+16)
	b = append(b, 0, 0) // no UDP checksum (allowed for IPv4)
	b = binary.BigEndian.AppendUint32(b, probeMagic)
	b = append(b, kind, 0, 0, 0)
	b = binary.BigEndian.AppendUint64(b, seq)
	return b
}

// probeHdr is what a received probe frame says.
type probeHdr struct {
	src  uint32
	kind uint8
	seq  uint64
}

// decodeProbe parses a probe frame (or the first bytes of one, as a
// PACKET_IN carries); ok is false for any other frame.
func decodeProbe(f []byte) (probeHdr, bool) {
	if len(f) < probeLen || binary.BigEndian.Uint16(f[12:]) != 0x0800 || f[14] != 0x45 || f[23] != 17 {
		return probeHdr{}, false
	}
	if binary.BigEndian.Uint16(f[36:]) != probeUDPDst || binary.BigEndian.Uint32(f[42:]) != probeMagic {
		return probeHdr{}, false
	}
	return probeHdr{src: binary.BigEndian.Uint32(f[26:]), kind: f[46], seq: binary.BigEndian.Uint64(f[50:])}, true
}

func ipString(a uint32) string {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], a)
	return netip.AddrFrom4(b).String()
}

// rxEvent is one probe frame seen on a data port.
type rxEvent struct {
	hdr probeHdr
	at  time.Time
}

// dataPort is one host interface facing a switch port.
type dataPort struct {
	name  string
	sock  *afsock.Socket
	rx    chan rxEvent
	drops atomic.Uint64
	buf   []byte
}

func openDataPort(ifname string, log *slog.Logger) (*dataPort, error) {
	s, err := afsock.Open(afsock.Options{IfName: ifname, Promiscuous: true, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("data port %s: %w", ifname, err)
	}
	p := &dataPort{name: ifname, sock: s, rx: make(chan rxEvent, 65536)}
	go func() {
		_ = s.Run(func(frame []byte, at time.Time) {
			h, ok := decodeProbe(frame)
			if !ok {
				return
			}
			select {
			case p.rx <- rxEvent{hdr: h, at: at}:
			default:
				p.drops.Add(1)
			}
		})
	}()
	return p, nil
}

// send writes one probe frame and returns when it was handed over.
func (p *dataPort) send(src uint32, kind uint8, seq uint64) (time.Time, error) {
	p.buf = encodeProbe(p.buf[:0], src, kind, seq)
	t := time.Now()
	if err := p.sock.Write(p.buf); err != nil {
		return t, fmt.Errorf("send probe on %s: %w", p.name, err)
	}
	return t, nil
}

func (p *dataPort) close() { p.sock.Close() }

package probes

import (
	"errors"
	"fmt"
	"net/netip"
)

// ProtoTCP is the IP protocol number of TCP.
const ProtoTCP = 6

// FiveTuple identifies a flow. It is comparable, so it can key a map.
type FiveTuple struct {
	SrcIP, DstIP     netip.Addr
	SrcPort, DstPort uint16
	Proto            uint8
}

// Reverse swaps source and destination: the tuple of the reply.
func (t FiveTuple) Reverse() FiveTuple {
	return FiveTuple{SrcIP: t.DstIP, DstIP: t.SrcIP, SrcPort: t.DstPort, DstPort: t.SrcPort, Proto: t.Proto}
}

func (t FiveTuple) String() string {
	return fmt.Sprintf("%d %s -> %s",
		t.Proto, netip.AddrPortFrom(t.SrcIP, t.SrcPort), netip.AddrPortFrom(t.DstIP, t.DstPort))
}

// TupleSpec describes the flows a prober generates: TCP from Src (and, past
// 64 512 flows, the addresses after it) to Dst:DstPort, source ports
// varying. Zero fields take the defaults 10.0.0.1, 10.0.0.2, 80 (the
// paper's NIC A → NIC B).
type TupleSpec struct {
	Src, Dst netip.Addr
	DstPort  uint16
}

const (
	firstEphemeralPort = 1024
	portsPerAddr       = 65536 - firstEphemeralPort // 64 512 = 2^10 · 3^2 · 7
)

func (s TupleSpec) withDefaults() TupleSpec {
	if !s.Src.IsValid() {
		s.Src = netip.AddrFrom4([4]byte{10, 0, 0, 1})
	}
	if !s.Dst.IsValid() {
		s.Dst = netip.AddrFrom4([4]byte{10, 0, 0, 2})
	}
	if s.DstPort == 0 {
		s.DstPort = 80
	}
	return s
}

// GenerateTuples returns n distinct TCP 5-tuples, a deterministic function
// of (n, spec, seed). Flow i uses source address Src+i/64512 and a source
// port from an affine permutation of 1024–65535 picked by the seed, so the
// ports look scattered (as a real stack's would) yet never repeat.
func GenerateTuples(n int, spec TupleSpec, seed uint64) ([]FiveTuple, error) {
	if n < 0 {
		return nil, fmt.Errorf("generate tuples: negative count %d", n)
	}
	spec = spec.withDefaults()
	offset := splitmix64(seed) % portsPerAddr
	stride := coprimeStride(splitmix64(seed ^ 0x9e3779b97f4a7c15))
	out := make([]FiveTuple, n)
	src := spec.Src
	for i := range out {
		j := i % portsPerAddr
		if i > 0 && j == 0 {
			src = src.Next()
			if !src.IsValid() {
				return nil, errors.New("generate tuples: ran out of source addresses")
			}
		}
		port := firstEphemeralPort + (offset+uint64(j)*stride)%portsPerAddr
		out[i] = FiveTuple{
			SrcIP: src, DstIP: spec.Dst,
			SrcPort: uint16(port), DstPort: spec.DstPort,
			Proto: ProtoTCP,
		}
	}
	return out, nil
}

// coprimeStride maps h to a stride coprime with portsPerAddr, so that
// j ↦ offset + j·stride (mod portsPerAddr) is a permutation.
func coprimeStride(h uint64) uint64 {
	s := h%portsPerAddr | 1 // odd: coprime with 2^10
	for s%3 == 0 || s%7 == 0 {
		s = (s + 2) % portsPerAddr
	}
	return s
}

// splitmix64 is a fixed, well-mixed hash: tuples and ISNs must not change
// when the standard library's random generators do.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

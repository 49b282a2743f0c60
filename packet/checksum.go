package packet

import "encoding/binary"

// The Internet checksum (RFC 1071), the one implementation of the project.
// Sums are carried as uint32 partial sums so that a pseudo-header, a header
// and a payload held in different slices can be added up without copying.

// Sum adds b to the partial one's-complement sum initial, as 16-bit
// big-endian words; an odd last byte is padded with a zero byte. Only the
// last slice of a chain may have odd length.
func Sum(b []byte, initial uint32) uint32 {
	s := uint64(initial)
	for len(b) >= 8 {
		s += uint64(binary.BigEndian.Uint32(b)) + uint64(binary.BigEndian.Uint32(b[4:]))
		b = b[8:]
	}
	for len(b) >= 2 {
		s += uint64(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		s += uint64(b[0]) << 8
	}
	// Fold 64 -> 32 bits; the result is still a valid partial sum.
	for s>>32 != 0 {
		s = s&0xffffffff + s>>32
	}
	return uint32(s)
}

// Fold folds a partial sum to 16 bits and complements it: the value that
// goes into a checksum field.
func Fold(s uint32) uint16 {
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}

// Checksum is the Internet checksum of b started from the partial sum
// initial (0, or a PseudoHeaderSum). Over data that includes a correct
// checksum field it is 0.
func Checksum(b []byte, initial uint32) uint16 { return Fold(Sum(b, initial)) }

// PseudoHeaderSum is the partial sum of the IPv4 pseudo-header that TCP
// and UDP checksums cover: addresses, protocol and segment length.
func PseudoHeaderSum(src, dst [4]byte, proto IPProtocol, length int) uint32 {
	s := uint32(binary.BigEndian.Uint16(src[0:])) + uint32(binary.BigEndian.Uint16(src[2:]))
	s += uint32(binary.BigEndian.Uint16(dst[0:])) + uint32(binary.BigEndian.Uint16(dst[2:]))
	return s + uint32(proto) + uint32(length)
}

// UpdateChecksum16 updates checksum field value sum for a 16-bit word of
// the covered data changing from old to new, per RFC 1624 eqn. 3:
// HC' = ~(~HC + ~m + m'). A frame whose checksum was right stays right; one
// that was wrong (e.g. left to an offloading NIC) stays wrong by as much.
func UpdateChecksum16(sum, old, new uint16) uint16 {
	s := uint32(^sum) + uint32(^old) + uint32(new)
	s = s&0xffff + s>>16
	s = s&0xffff + s>>16
	return ^uint16(s)
}

// UpdateChecksum32 is UpdateChecksum16 for a 32-bit word (an IPv4 address).
func UpdateChecksum32(sum uint16, old, new uint32) uint16 {
	sum = UpdateChecksum16(sum, uint16(old>>16), uint16(new>>16))
	return UpdateChecksum16(sum, uint16(old), uint16(new))
}

package packet

import "errors"

// ErrTruncated matches (errors.Is) every decode error caused by a header
// that does not fit in the bytes given, as opposed to one that is there but
// malformed.
var ErrTruncated = errors.New("packet: truncated")

// Error is a decode or build error. The decoders return only predeclared
// *Error values, so that a malformed frame costs no allocation either.
type Error struct {
	Layer     string // "ethernet", "ipv4", ...
	Reason    string
	truncated bool
}

func (e *Error) Error() string { return "packet: " + e.Layer + ": " + e.Reason }

// Is makes errors.Is(err, ErrTruncated) true for truncation errors.
func (e *Error) Is(target error) bool { return target == ErrTruncated && e.truncated }

func truncErr(layer, reason string) *Error {
	return &Error{Layer: layer, Reason: reason, truncated: true}
}
func badErr(layer, reason string) *Error { return &Error{Layer: layer, Reason: reason} }

var (
	errEthernetShort  = truncErr("ethernet", "shorter than 14 bytes")
	errDot1QShort     = truncErr("802.1q", "tag shorter than 4 bytes")
	errARPShort       = truncErr("arp", "shorter than 28 bytes")
	errARPNotEthIPv4  = badErr("arp", "not Ethernet/IPv4 (hardware type 1, protocol 0x0800, sizes 6 and 4)")
	errIPv4Short      = truncErr("ipv4", "shorter than 20 bytes")
	errIPv4Version    = badErr("ipv4", "version is not 4")
	errIPv4IHL        = badErr("ipv4", "header length below 20 bytes")
	errIPv4TotalLen   = badErr("ipv4", "total length below header length")
	errIPv4HdrShort   = truncErr("ipv4", "header (with options) longer than the bytes present")
	errIPv4Option     = badErr("ipv4", "option length runs past the header or is below 2")
	errTCPShort       = truncErr("tcp", "shorter than 20 bytes")
	errTCPDataOffset  = badErr("tcp", "data offset below 5 words")
	errTCPHdrShort    = truncErr("tcp", "data offset beyond the bytes present")
	errTCPOption      = badErr("tcp", "option length runs past the header or is below 2")
	errUDPShort       = truncErr("udp", "shorter than 8 bytes")
	errUDPLength      = badErr("udp", "length field below 8")
	errICMPShort      = truncErr("icmp", "shorter than 8 bytes")
	errVerifyTrunc    = truncErr("checksum", "cannot verify a truncated packet")
	errIPv4Checksum   = badErr("ipv4", "bad header checksum")
	errTCPChecksum    = badErr("tcp", "bad checksum")
	errUDPChecksum    = badErr("udp", "bad checksum")
	errICMPChecksum   = badErr("icmp", "bad checksum")
	errBuildNoEth     = badErr("build", "a packet needs an Ethernet layer")
	errBuildL3        = badErr("build", "at most one of ARP and IPv4")
	errBuildL4        = badErr("build", "at most one of TCP, UDP and ICMP, and only over IPv4")
	errBuildIPOptions = badErr("build", "IPv4 options must be a multiple of 4 bytes, at most 40")
	errBuildTCPOpts   = badErr("build", "TCP options longer than 40 bytes")
	errBuildTooLong   = badErr("build", "IPv4 total length above 65535")
)

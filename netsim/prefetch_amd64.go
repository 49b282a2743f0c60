package netsim

// prefetch asks the CPU to bring the three cache lines from p on into the
// cache (x86 PREFETCHT0) and returns without waiting for them: a hint, it
// never faults and changes nothing but timing. A model's descriptor
// usually embeds the Packet first and what it carries (a TCP segment)
// right after it, which the far end reads on delivery: 112 bytes for
// experiments/highbdp, two lines when the descriptor starts on a line,
// three when it does not (descriptors of 232 bytes in a slab start at
// every multiple of 8 bytes modulo 64).
//
//go:noescape
func prefetch(p *Packet)

package netsim

// prefetch asks the CPU to bring p's first two cache lines into the cache
// (x86 PREFETCHT0) and returns without waiting for them: a hint, it never
// faults and changes nothing but timing. Two lines, because a model's
// descriptor usually embeds the Packet first and what it carries (a TCP
// segment) right after it, which the far end reads on delivery.
//
//go:noescape
func prefetch(p *Packet)

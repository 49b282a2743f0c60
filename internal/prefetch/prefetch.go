// Package prefetch asks the CPU to bring memory into its cache ahead of
// use. The simulator's hot loops touch, for every packet, records written
// one round trip earlier (a packet descriptor on a long pipe, a sender's
// record of a segment in flight): at 10 Gbit/s that is megabytes ago, so
// each such touch is a miss to memory. Asking for the line a few
// operations before it is needed overlaps that wait with other work.
//
// A prefetch is a hint: it never faults, even for an address past the end
// of an allocation, and changes nothing but timing, so results cannot
// depend on it.
package prefetch

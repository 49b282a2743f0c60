package netsim

// linePad is a cache line of nothing, at both ends of the structs a
// packet writes (Link, DropTail, Pool). A model split over two event
// loops (experiments/highbdp's split cells) has such objects on both
// cores, made one after another, so the allocator packs them side by side
// (a Link was 416 bytes, six and a half lines): the line two of them
// share is written by both cores, and every write moves it out of the
// other core's cache. Measured there (BenchmarkAIMD10GFull -split
// bottleneck): Link.Send's first read of the queue and the transmitter
// took 10.6 % of the split cell's CPU, and 1.4 % once padded
// (docs/high-bdp.md, "Round 10").
// A line at each end keeps every object's fields on lines of its own,
// whatever the size class and whatever sits beside it.
type linePad [64]byte

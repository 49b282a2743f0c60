// Package highbdp is paper 002's scenario (TCP's AIMD in high
// bandwidth-delay-product networks): 15 sources and 15 sinks on 1 Gbit/s
// access links, two routers joined by a DropTail bottleneck of 100 Mbit/s
// to 10 Gbit/s, 10 long FTP flows, 3 short ones and 2 web-like ones, on
// the virtual clock with package tcp's endpoints. It also runs the
// paper's single-flow checks (slow-start end, additive-increase growth
// with and without delayed ACKs) and the `high-bdp` grid of (bottleneck,
// algorithm, seed) cells, shardable like the other experiment specs
// (docs/high-bdp.md).
//
// Cells run in parallel, the costliest first (RunOptions.Workers), and
// one cell can itself run on two event loops, cut at links of long delay
// (Scenario.Split, split.go): the hour at 10 Gbit/s is one cell.
package highbdp

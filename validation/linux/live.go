package linux

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pseudocong/pseudocong/experiments/livetcp"
)

// delayLimit bounds each delay line: far above any cell's rate × delay
// (50 Mbit/s × 40 ms = 250 kB), so a late timer's burst is never dropped
// on the line, only in the queue under test.
const delayLimit = "4mb"

// ackQueue is the least depth of the queue the ACKs go through (the
// switch's port towards the client), as ours.
const ackQueue = 1000

// Emu is the switch's port emulation for a cell's setting: the port
// towards the server (the data direction) has the queue under test, the
// bottleneck's line rate and RTT/2 of delay; the port towards the client
// (the ACKs) the same rate and delay behind a queue of at least ackQueue
// packets. The hosts' own veths add no delay and no rate limit.
//
// With kernel set, the port towards the server keeps only its delay line
// and the queue and rate move to the kernel's tbf on that port's veth
// (KernelTBF): the anchor that tells our shaper's effect from Linux
// TCP's.
func Emu(c Cell, kernel bool) livetcp.SwitchEmu {
	rate := fmt.Sprintf("%dbit", c.Rate)
	delay := fmt.Sprintf("%dus,limit=%s", (c.RTT / 2).Microseconds(), delayLimit)
	e := livetcp.SwitchEmu{
		Right: livetcp.PortEmu{Qdisc: fmt.Sprintf("droptail,limit=%d", c.queue()), Rate: rate, Delay: delay},
		Left:  livetcp.PortEmu{Qdisc: fmt.Sprintf("droptail,limit=%d", max(c.queue(), ackQueue)), Rate: rate, Delay: delay},
	}
	if kernel {
		e.Right = livetcp.PortEmu{Delay: delay}
	}
	return e
}

// frameBytes is a full frame on the live path: the segment, TCP/IP with
// timestamps (52) and Ethernet (14); tbf and our shaper both count it.
const frameBytes = LinuxSegment + 52 + 14

// TBFArgs is the kernel tbf standing for the cell's bottleneck: its
// rate, a bucket as deep as our line's (two full frames, or 2 ms at the
// rate, the larger: softswitch/egress's txBucket) and a byte limit of
// the cell's queue in full frames (tbf's limit counts the bucket's
// backlog only).
func TBFArgs(c Cell) []string {
	burst := max(2*1518, int(c.Rate/8*2/1000))
	return []string{"rate", fmt.Sprintf("%dbit", c.Rate), "burst", fmt.Sprint(burst), "limit", fmt.Sprint(c.queue() * frameBytes)}
}

// Live runs cells on a live bed: one switch between the two host
// namespaces, reconfigured when a cell's emulation differs from the
// last. Close it when done.
type Live struct {
	// Binary is the pseudocong binary the switch runs.
	Binary string
	// RTPriority, if > 0, runs the switch under SCHED_FIFO at this
	// priority (chrt -f; every thread inherits it): its shaper and delay
	// line run on wall-clock timers, and on a busy machine a switch at
	// normal priority wakes late enough to stretch the RTT by several
	// milliseconds (measured: docs/tcp-validation.md, "Against Linux").
	RTPriority int
	// KernelShaper puts the bottleneck's queue and rate in the kernel's
	// tbf instead of our switch (Emu's kernel mode).
	KernelShaper bool
	Log          *slog.Logger
	bed          *livetcp.Bed
	emu          livetcp.SwitchEmu
	dir          string
	tbf          string // the veth carrying the kernel tbf, if any
}

// Close stops the switch, removes the namespaces and restores the
// host's allowed congestion controls.
func (l *Live) Close() error {
	var err error
	if l.tbf != "" {
		if out, terr := exec.Command("tc", "qdisc", "del", "dev", l.tbf, "root").CombinedOutput(); terr != nil {
			err = fmt.Errorf("linux: tc qdisc del dev %s root: %v: %s", l.tbf, terr, out)
		}
		l.tbf = ""
	}
	if l.bed != nil {
		err = errors.Join(err, l.bed.Close())
		l.bed = nil
	}
	if l.dir != "" {
		err = errors.Join(err, os.RemoveAll(l.dir))
		l.dir = ""
	}
	return err
}

// binary is the switch's executable: Binary, or a wrapper that execs it
// under chrt (same pid, so stopping and the parent-death signal still
// reach the switch).
func (l *Live) binary() (string, error) {
	if l.RTPriority <= 0 {
		return l.Binary, nil
	}
	if _, err := exec.LookPath("chrt"); err != nil {
		return "", fmt.Errorf("linux: real-time switch: %w", err)
	}
	dir, err := os.MkdirTemp("", "linuxval-")
	if err != nil {
		return "", err
	}
	l.dir = dir
	w := filepath.Join(dir, "switch-rt")
	script := fmt.Sprintf("#!/bin/sh\nexec chrt -f %d '%s' \"$@\"\n", l.RTPriority, strings.ReplaceAll(l.Binary, "'", `'\''`))
	if err := os.WriteFile(w, []byte(script), 0o755); err != nil {
		return "", err
	}
	return w, nil
}

func (l *Live) log() *slog.Logger {
	if l.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l.Log
}

func (l *Live) setup(ctx context.Context, c Cell) error {
	if err := l.setupSwitch(ctx, c); err != nil {
		return err
	}
	if !l.KernelShaper {
		return nil
	}
	port := l.bed.Ports()[0][1]
	args := append([]string{"qdisc", "replace", "dev", port, "root", "tbf"}, TBFArgs(c)...)
	if out, err := exec.Command("tc", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("linux: tc %s: %v: %s", strings.Join(args, " "), err, out)
	}
	l.tbf = port
	return nil
}

func (l *Live) setupSwitch(ctx context.Context, c Cell) error {
	emu := Emu(c, l.KernelShaper)
	if l.bed == nil {
		bin, err := l.binary()
		if err != nil {
			return err
		}
		bed, err := livetcp.Up(ctx, livetcp.Config{Binary: bin, Switches: []livetcp.SwitchEmu{emu},
			CC: []string{"reno", "cubic", "bbr"}, Log: l.Log})
		if err != nil {
			return err
		}
		l.bed, l.emu = bed, emu
		return l.checkMTU()
	}
	if emu == l.emu {
		return nil
	}
	if err := l.bed.Reconfigure(ctx, []livetcp.SwitchEmu{emu}); err != nil {
		return err
	}
	l.emu = emu
	return nil
}

// checkMTU makes sure the live segment is LinuxSegment: both hosts'
// interfaces have the 1500-byte MTU it assumes.
func (l *Live) checkMTU() error {
	for _, h := range []struct{ ns, ifc string }{{l.bed.Client.Netns, l.bed.Client.Iface}, {l.bed.Server.Netns, l.bed.Server.Iface}} {
		out, err := exec.Command("ip", "netns", "exec", h.ns, "cat", "/sys/class/net/"+h.ifc+"/mtu").Output()
		if err != nil {
			return fmt.Errorf("linux: mtu of %s in %s: %w", h.ifc, h.ns, err)
		}
		mtu, err := strconv.Atoi(strings.TrimSpace(string(out)))
		if err != nil {
			return fmt.Errorf("linux: mtu of %s in %s: %q", h.ifc, h.ns, out)
		}
		if seg := mtu - 52; seg != LinuxSegment {
			return fmt.Errorf("linux: %s in %s has MTU %d: segments of %d bytes, the simulator is set for %d", h.ifc, h.ns, mtu, seg, LinuxSegment)
		}
	}
	return nil
}

// Run runs one cell live: iperf3 -P Flows for Duration from the client
// host to the server host, both namespaces' default congestion control
// and the socket's (-C) set to the cell's algorithm; goodput is the
// receiver's over the whole run (no -O), retransmissions, recoveries
// and HyStart's exits the client namespace's counters over the whole
// run.
func (l *Live) Run(ctx context.Context, c Cell) (Side, error) {
	if err := c.check(); err != nil {
		return Side{}, err
	}
	if err := l.setup(ctx, c); err != nil {
		return Side{}, fmt.Errorf("linux: live %s: %w", c.Key(), err)
	}
	before, err := l.bed.Drops(ctx)
	if err != nil {
		return Side{}, err
	}
	var tbfBefore uint64
	if l.KernelShaper {
		if tbfBefore, err = tcDrops(l.tbf); err != nil {
			return Side{}, err
		}
	}
	r, err := l.bed.Run(ctx, livetcp.Iperf{ClientCC: c.CC, ServerCC: c.CC, CC: c.CC, Duration: c.Duration,
		Interval: time.Second, Parallel: c.Flows})
	if err != nil {
		return Side{}, fmt.Errorf("linux: live %s: %w\n%s", c.Key(), err, l.bed.SwitchOutput())
	}
	if r.SenderCC != "" && r.SenderCC != c.CC {
		return Side{}, fmt.Errorf("linux: live %s: iperf3's sender used %s", c.Key(), r.SenderCC)
	}
	if len(r.StreamsMbps) != c.Flows {
		return Side{}, fmt.Errorf("linux: live %s: iperf3 reported %d streams", c.Key(), len(r.StreamsMbps))
	}
	after, err := l.bed.Drops(ctx)
	if err != nil {
		return Side{}, err
	}
	s := Side{Goodput0: r.StreamsMbps[0], Aggregate: r.GoodputMbps, Retrans: r.RetransmitsAll,
		Recoveries: r.Recoveries, Streams: r.StreamsMbps}
	if r.HyStartExits > 0 {
		s.HyStartCwnd = float64(r.HyStartCwnd) / float64(r.HyStartExits)
	}
	for k, v := range after {
		// The queue under test only: the forward port's qdisc drops
		// (the switch counts each again as a tx_error); with the kernel
		// shaper, tbf's drops (below) and any frame the switch failed to
		// write into it.
		if !strings.Contains(k, "port=2,") {
			continue
		}
		if !strings.Contains(k, "pseudocong_port_egress_dropped_total{") && !(l.KernelShaper && strings.Contains(k, "pseudocong_switch_packets_dropped_total{")) {
			continue
		}
		if d := v - before[k]; d > 0 {
			s.Drops += uint64(d)
			l.log().Debug("live drops", "cell", c.Key(), "counter", k, "n", d)
		}
	}
	if l.KernelShaper {
		d, err := tcDrops(l.tbf)
		if err != nil {
			return Side{}, err
		}
		s.Drops += d - tbfBefore
	}
	l.log().Info("live cell", "cell", c.Key(), "goodput0", s.Goodput0, "aggregate", s.Aggregate,
		"retrans", s.Retrans, "recoveries", s.Recoveries, "drops", s.Drops, "hystart_cwnd", s.HyStartCwnd,
		"streams", fmt.Sprint(s.Streams))
	return s, nil
}

// tcDrops is the dropped count of an interface's root qdisc (tc -s).
func tcDrops(dev string) (uint64, error) {
	out, err := exec.Command("tc", "-s", "qdisc", "show", "dev", dev, "root").CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("linux: tc -s qdisc show dev %s: %v: %s", dev, err, out)
	}
	_, rest, ok := strings.Cut(string(out), "dropped ")
	if !ok {
		return 0, fmt.Errorf("linux: no drop count in tc output for %s: %q", dev, out)
	}
	n, _, _ := strings.Cut(rest, ",")
	return strconv.ParseUint(strings.TrimSpace(n), 10, 64)
}

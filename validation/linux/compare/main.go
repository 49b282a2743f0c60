// Command compare runs the same dumbbells live (real Linux TCP through
// our software switch, package validation/linux) and in our simulator,
// and prints the side-by-side table of docs/tcp-validation.md's "Against
// Linux": per cell, goodput of flow 0, aggregate goodput and
// retransmitted segments, ours | Linux | ratio, the ±15 % verdict, and
// every miss with the facts that point at its cause. Needs root, iperf3,
// nstat, ss and ping (the live side makes its own namespaces and removes
// them, also on failure).
//
//	go run ./validation/linux/compare [-cc reno,cubic,bbr] [-flows 1,2] [-settings 10mbit/20ms,...] [-duration 20s]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pseudocong/pseudocong/netsim"
	vl "github.com/pseudocong/pseudocong/validation/linux"
)

func main() {
	ccs := flag.String("cc", "reno,cubic,bbr", "comma-separated congestion controls (Linux names)")
	flows := flag.String("flows", "1,2", "comma-separated flow counts")
	settings := flag.String("settings", "10mbit/20ms,10mbit/80ms,50mbit/20ms,50mbit/80ms",
		"comma-separated bottlenecks RATE/RTT[/QUEUE packets]; queue default one BDP of 1500-byte packets")
	dur := flag.Duration("duration", 20*time.Second, "time per cell, both sides")
	bin := flag.String("bin", "", "the pseudocong binary the switch runs (default: go build one)")
	seed := flag.Uint64("seed", 1, "our simulator's seed")
	verbose := flag.Bool("v", false, "log every live cell to stderr")
	anchor := flag.Bool("anchor", true, "also run every cell with the kernel's tbf as the bottleneck (the anchor column)")
	rt := flag.Int("rt", 10, "run the switch under SCHED_FIFO at this priority (0: normal scheduling)")
	flag.Parse()
	if flag.NArg() > 0 {
		usage("unexpected arguments %q", flag.Args())
	}
	var fl []int
	for _, f := range strings.Split(*flows, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 16 {
			usage("-flows %q: want integers 1..16", *flows)
		}
		fl = append(fl, n)
	}
	var st []vl.Setting
	for _, s := range strings.Split(*settings, ",") {
		p := strings.Split(strings.TrimSpace(s), "/")
		if len(p) < 2 || len(p) > 3 {
			usage("-settings %q: want RATE/RTT[/QUEUE]", s)
		}
		rate, err := netsim.ParseRate(p[0])
		if err != nil {
			usage("-settings %q: rate: %v", s, err)
		}
		rtt, err := time.ParseDuration(p[1])
		if err != nil || rtt <= 0 {
			usage("-settings %q: rtt %q: want a positive duration", s, p[1])
		}
		x := vl.Setting{Rate: rate, RTT: rtt}
		if len(p) == 3 {
			if x.Queue, err = strconv.Atoi(p[2]); err != nil || x.Queue < 1 {
				usage("-settings %q: queue %q: want packets ≥ 1", s, p[2])
			}
		}
		st = append(st, x)
	}
	if *dur <= 0 {
		usage("-duration %v: want > 0", *dur)
	}
	cc := strings.Split(*ccs, ",")
	for _, c := range cc {
		if c != "reno" && c != "cubic" && c != "bbr" {
			usage("-cc %q: want reno, cubic, bbr", c)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, vl.Grid(cc, fl, st, *dur), *bin, *seed, *verbose, *rt, *anchor); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

func usage(f string, a ...any) {
	fmt.Fprintf(os.Stderr, "compare: "+f+"\n", a...)
	flag.Usage()
	os.Exit(2)
}

func run(ctx context.Context, cells []vl.Cell, bin string, seed uint64, verbose bool, rt int, anchor bool) (err error) {
	if bin == "" {
		dir, err := os.MkdirTemp("", "linuxcompare-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		bin = filepath.Join(dir, "pseudocong")
		if out, err := exec.Command("go", "build", "-o", bin, "github.com/pseudocong/pseudocong/cmd/pseudocong").CombinedOutput(); err != nil {
			return fmt.Errorf("go build: %v\n%s", err, out)
		}
	}
	lvl := slog.LevelWarn
	if verbose {
		lvl = slog.LevelInfo
	}
	live := &vl.Live{Binary: bin, RTPriority: rt, Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))}
	kern := &vl.Live{Binary: bin, RTPriority: rt, KernelShaper: true, Log: live.Log}
	defer func() {
		err = errors.Join(err, live.Close(), kern.Close())
	}()
	start := time.Now()
	var rows []vl.Row
	for i, c := range cells {
		ours, err := vl.Sim(c, seed)
		if err != nil {
			return err
		}
		linux, err := live.Run(ctx, c)
		if err != nil {
			return err
		}
		row := vl.Row{Cell: c, Ours: ours, Linux: linux}
		if anchor {
			a, err := kern.Run(ctx, c)
			if err != nil {
				return err
			}
			row.Anchor = &a
		}
		rows = append(rows, row)
		fmt.Fprintf(os.Stderr, "[%d/%d] %s: goodput0 %.2f / %.2f, aggregate %.2f / %.2f, retrans %d / %d", i+1, len(cells),
			c.Key(), ours.Goodput0, linux.Goodput0, ours.Aggregate, linux.Aggregate, ours.Retrans, linux.Retrans)
		if row.Anchor != nil {
			fmt.Fprintf(os.Stderr, "; kernel tbf %.2f Mbit/s, %d retrans", row.Anchor.Aggregate, row.Anchor.Retrans)
		}
		fmt.Fprintln(os.Stderr)
	}
	vl.WriteTable(os.Stdout, rows, vl.Tolerance)
	fmt.Printf("\n%d cells of %v each; wall time %.0f s.\n", len(cells), cells[0].Duration, time.Since(start).Seconds())
	return nil
}

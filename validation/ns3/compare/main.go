// Command compare runs the same dumbbells in ns-3 (validation/ns3's
// program) and in ours (package tcp/dumbbell) and prints the side-by-side
// table of docs/tcp-validation.md: per cell, goodput of flow 0,
// utilisation, Jain's index and retransmissions, each with the issue's
// agreement bound (one flow's goodput ±5 %, utilisation ±3 points, Jain
// ±0.05, retransmissions within a factor 1.5) and the cells outside it.
//
//	go run ./validation/ns3/compare -ns3 bin/ns3/dumbbell [-grid full|reduced] [-duration 30s]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/pseudocong/pseudocong/netsim"
	"github.com/pseudocong/pseudocong/tcp"
	"github.com/pseudocong/pseudocong/tcp/dumbbell"
)

// delAck is -delack: delayed ACKs (2 segments, 200 ms) on both sides.
var delAck = true

// countACKs is -count-acks.
var countACKs bool

type cell struct {
	flows int
	cc    string
	mbit  int
	rtt   time.Duration
	red   bool
}

func (c cell) String() string {
	q := "droptail"
	if c.red {
		q = "red+ecn"
	}
	return fmt.Sprintf("%d× %s %d Mbit/s %v %s", c.flows, c.cc, c.mbit, c.rtt, q)
}

// bdp is the bottleneck's bandwidth-delay product in full packets.
func (c cell) bdp() int {
	return max(int(math.Round(float64(c.mbit)*1e6*c.rtt.Seconds()/8/1500)), 4)
}

func main() {
	ns3 := flag.String("ns3", "bin/ns3/dumbbell", "the ns-3 program (validation/ns3/build.sh)")
	grid := flag.String("grid", "full", "full (the issue's 96 cells) or reduced (8)")
	dur := flag.Duration("duration", 30*time.Second, "simulated time per cell")
	only := flag.String("cc", "", "comma-separated algorithms to keep (default: the grid's)")
	onlyFlows := flag.String("flows", "", "comma-separated flow counts to keep (default: the grid's)")
	delack := flag.Bool("delack", true, "delayed ACKs on both sides")
	acks := flag.Bool("count-acks", false, "our sender grows the window per ACK as ns-3's TcpNewReno (tcp.Config.CountACKs)")
	flag.Parse()
	delAck, countACKs = *delack, *acks
	var cells []cell
	flows, ccs, rates, rtts, reds := []int{1, 2, 4}, []string{"newreno", "cubic", "bbr", "vegas"}, []int{10, 50}, []time.Duration{20 * time.Millisecond, 80 * time.Millisecond}, []bool{false, true}
	if *grid == "reduced" {
		flows, ccs, rates, rtts = []int{1, 2}, []string{"newreno", "cubic"}, []int{10}, []time.Duration{20 * time.Millisecond}
	}
	if *only != "" {
		ccs = strings.Split(*only, ",")
	}
	if *onlyFlows != "" {
		flows = nil
		for _, f := range strings.Split(*onlyFlows, ",") {
			n, err := strconv.Atoi(f)
			if err != nil || n < 1 {
				fmt.Fprintf(os.Stderr, "-flows %q: want positive integers\n", *onlyFlows)
				os.Exit(2)
			}
			flows = append(flows, n)
		}
	}
	for _, n := range flows {
		for _, a := range ccs {
			for _, r := range rates {
				for _, t := range rtts {
					for _, red := range reds {
						cells = append(cells, cell{n, a, r, t, red})
					}
				}
			}
		}
	}
	fmt.Println("| cell | goodput₀ ours / ns-3 (Mbit/s) | util ours / ns-3 | Jain ours / ns-3 | retrans ours / ns-3 | events ours / ns-3 | wall ours / ns-3 (s) | outside |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	var out, total int
	var wallOurs, wallNS3 float64
	for _, c := range cells {
		r, err := compare(*ns3, c, *dur)
		if err != nil {
			fmt.Fprintln(os.Stderr, c, err)
			os.Exit(1)
		}
		total++
		if len(r.outside) > 0 {
			out++
		}
		wallOurs += r.ours.WallS
		wallNS3 += r.ns3.WallS
		fmt.Printf("| %v | %.2f / %.2f | %.3f / %.3f | %.3f / %.3f | %d / %d | %d / %d | %.3f / %.3f | %s |\n",
			c, r.ours.Flows[0].GoodputMbps, r.ns3.Flows[0].GoodputMbps, r.ours.Utilisation, r.ns3.Utilisation,
			r.ours.Jain, r.ns3.Jain, retrans(r.ours.Flows), retrans(r.ns3.Flows),
			r.ours.Events, r.ns3.Events, r.ours.WallS, r.ns3.WallS, strings.Join(r.outside, ", "))
	}
	fmt.Printf("\n%d of %d cells outside a bound; wall time ours %.1f s, ns-3 %.1f s.\n", out, total, wallOurs, wallNS3)
}

type comparison struct {
	ours, ns3 *dumbbell.Result
	outside   []string // the bounds the cell is outside of
}

// compare runs one cell on both sides and checks the bounds.
func compare(bin string, c cell, d time.Duration) (comparison, error) {
	ours, err := runOurs(c, d)
	if err != nil {
		return comparison{}, err
	}
	theirs, err := runNS3(bin, c, d, ours.qw)
	if err != nil {
		return comparison{}, err
	}
	var bad []string
	g0, h0 := ours.r.Flows[0].GoodputMbps, theirs.Flows[0].GoodputMbps
	if c.flows == 1 && math.Abs(g0-h0) > 0.05*h0 {
		bad = append(bad, "goodput")
	}
	if math.Abs(ours.r.Utilisation-theirs.Utilisation) > 0.03 {
		bad = append(bad, "util")
	}
	if math.Abs(ours.r.Jain-theirs.Jain) > 0.05 {
		bad = append(bad, "jain")
	}
	if !within(float64(retrans(ours.r.Flows)), float64(retrans(theirs.Flows)), 1.5) {
		bad = append(bad, "retrans")
	}
	return comparison{ours: ours.r, ns3: theirs, outside: bad}, nil
}

// within reports a and b within a factor f of each other (both small
// counts, under 10, always agree: a factor means nothing there).
func within(a, b, f float64) bool {
	if a < 10 && b < 10 {
		return true
	}
	return a <= f*b && b <= f*a
}

func retrans(fs []dumbbell.FlowResult) uint64 {
	var n uint64
	for _, f := range fs {
		n += f.Retransmits
	}
	return n
}

type oursResult struct {
	r  *dumbbell.Result
	qw float64
}

// The settings both sides share: ns-3's timers (MinRto 1 s, SYN 3 s,
// delayed ACK 2 segments / 200 ms, no quick-ACK), IW 10, segment 1448 B,
// 4 MiB buffers, SACK and timestamps, no F-RTO (ns-3 has none).
func oursConfig(c cell, d time.Duration) dumbbell.Config {
	return dumbbell.Config{Flows: c.flows, CC: []string{c.cc}, Bottleneck: int64(c.mbit) * 1_000_000, RTT: c.rtt,
		Queue: c.bdp(), Qdisc: "droptail", Duration: d, DelAck: delAck, Seed: 1, Profile: tcp.NS3(), NoFRTO: true, CountACKs: countACKs}
}

func runOurs(c cell, d time.Duration) (oursResult, error) {
	cfg := oursConfig(c, d)
	var qw float64
	if c.red {
		cfg.Qdisc, cfg.ECN = "red,ecn", true
		q, err := netsim.ParseQdisc(cfg.QdiscSpecWithDefaults())
		if err != nil {
			return oursResult{}, err
		}
		qw = q.(*netsim.RED).Weight()
	}
	r, err := dumbbell.Run(cfg)
	return oursResult{r, qw}, err
}

func runNS3(bin string, c cell, d time.Duration, qw float64) (*dumbbell.Result, error) {
	args := []string{fmt.Sprintf("--flows=%d", c.flows), "--cc=" + c.cc, fmt.Sprintf("--bottleneck=%dMbps", c.mbit),
		fmt.Sprintf("--rttMs=%g", float64(c.rtt)/1e6), fmt.Sprintf("--queue=%d", c.bdp()), fmt.Sprintf("--duration=%g", d.Seconds()),
		"--segment=1448", "--minRto=1", fmt.Sprintf("--delack=%v", delAck)}
	if c.red {
		args = append(args, "--qdisc=red", "--ecn=1", fmt.Sprintf("--qw=%g", qw))
	}
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		return nil, fmt.Errorf("%s %v: %w", bin, args, err)
	}
	var r dumbbell.Result
	if err := json.Unmarshal(out, &r); err != nil {
		return nil, fmt.Errorf("ns-3 output %q: %w", out, err)
	}
	return &r, nil
}

// Command compare runs the same dumbbells in ns-3 (validation/ns3's
// program) and in ours (package tcp/dumbbell) and prints the side-by-side
// table of docs/tcp-validation.md: per cell, goodput of flow 0,
// utilisation, Jain's index and retransmissions, each with the issue's
// agreement bound (one flow's goodput ±5 %, utilisation ±3 points, Jain
// ±0.05, retransmissions within a factor 1.5) and the cells outside it.
//
//	go run ./validation/ns3/compare -ns3 bin/ns3/dumbbell [-grid full|reduced] [-duration 30s] [-semantics ns3|linux]
//
// By default our side runs with ns-3's growth semantics where ns-3's
// algorithm differs from Linux's by design (-semantics ns3,
// dumbbell.Config.NS3Semantics): the comparison is then like for like;
// -semantics linux runs our Linux ports as they are.
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

// ns3Semantics is -semantics=ns3: our algorithms grow as ns-3's do where
// ns-3's differ from Linux's by design (dumbbell.Config.NS3Semantics).
var ns3Semantics = true

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
	acks := flag.Bool("count-acks", false, "our sender grows the window per ACK as ns-3's TcpNewReno (tcp.Config.CountACKs), whatever -semantics says")
	from := flag.String("ns3-from", "", "take ns-3's side from a table this tool printed earlier (a markdown file; its rows are keyed by cell) instead of running ns-3: ns-3 is deterministic and ours is what changes")
	sem := flag.String("semantics", "ns3", "ns3: our algorithms grow as ns-3 3.37's where those differ from Linux's by design (dumbbell.Config.NS3Semantics); linux: as Linux's; both: two tables, ns-3 run once per cell")
	flag.Parse()
	delAck, countACKs = *delack, *acks
	var sems []bool // ns3Semantics values to run, one table each
	switch *sem {
	case "ns3":
		sems = []bool{true}
	case "linux":
		sems = []bool{false}
	case "both":
		sems = []bool{true, false}
	default:
		fmt.Fprintf(os.Stderr, "-semantics %q: want ns3, linux or both\n", *sem)
		os.Exit(2)
	}
	if *grid != "full" && *grid != "reduced" {
		fmt.Fprintf(os.Stderr, "-grid %q: want full or reduced\n", *grid)
		os.Exit(2)
	}
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
	if *from != "" {
		var err error
		if ns3Cache, err = readTable(*from); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	tables := make([]strings.Builder, len(sems))
	outs := make([]int, len(sems))
	walls := make([]float64, len(sems))
	var wallNS3 float64
	for i, c := range cells {
		rs, err := compareAll(*ns3, c, *dur, sems)
		if err != nil {
			fmt.Fprintln(os.Stderr, c, err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "%d/%d %v\n", i+1, len(cells), c)
		wallNS3 += rs[0].ns3.WallS
		for k, r := range rs {
			if len(r.outside) > 0 {
				outs[k]++
			}
			walls[k] += r.ours.WallS
			fmt.Fprintf(&tables[k], "| %v | %.2f / %.2f | %.3f / %.3f | %.3f / %.3f | %d / %d | %d / %d | %.3f / %.3f | %s |\n",
				c, r.ours.Flows[0].GoodputMbps, r.ns3.Flows[0].GoodputMbps, r.ours.Utilisation, r.ns3.Utilisation,
				r.ours.Jain, r.ns3.Jain, retrans(r.ours.Flows), retrans(r.ns3.Flows),
				r.ours.Events, r.ns3.Events, r.ours.WallS, r.ns3.WallS, strings.Join(r.outside, ", "))
		}
	}
	for k, ns3sem := range sems {
		name := "linux"
		if ns3sem {
			name = "ns3"
		}
		if k > 0 {
			fmt.Println()
		}
		fmt.Printf("Our side with -semantics %s:\n\n", name)
		fmt.Println("| cell | goodput₀ ours / ns-3 (Mbit/s) | util ours / ns-3 | Jain ours / ns-3 | retrans ours / ns-3 | events ours / ns-3 | wall ours / ns-3 (s) | outside |")
		fmt.Println("|---|---|---|---|---|---|---|---|")
		fmt.Print(tables[k].String())
		fmt.Printf("\n%d of %d cells outside a bound; wall time ours %.1f s, ns-3 %.1f s.\n", outs[k], len(cells), walls[k], wallNS3)
	}
}

type comparison struct {
	ours, ns3 *dumbbell.Result
	outside   []string // the bounds the cell is outside of
}

// compareAll runs one cell in ns-3 once and on our side once per
// ns3Semantics value in sems.
func compareAll(bin string, c cell, d time.Duration, sems []bool) ([]comparison, error) {
	defer func(v bool) { ns3Semantics = v }(ns3Semantics)
	var rs []comparison
	var theirs *dumbbell.Result
	for _, sem := range sems {
		ns3Semantics = sem
		ours, err := runOurs(c, d)
		if err != nil {
			return nil, err
		}
		if theirs == nil && ns3Cache != nil {
			if theirs = ns3Cache[c.String()]; theirs == nil {
				return nil, fmt.Errorf("-ns3-from: no row for %v", c)
			}
		}
		if theirs == nil {
			if theirs, err = runNS3(bin, c, d, ours.qw); err != nil {
				return nil, err
			}
		}
		rs = append(rs, check(c, ours.r, theirs))
	}
	return rs, nil
}

// check applies the bounds to one cell.
func check(c cell, ours, theirs *dumbbell.Result) comparison {
	var bad []string
	g0, h0 := ours.Flows[0].GoodputMbps, theirs.Flows[0].GoodputMbps
	if c.flows == 1 && math.Abs(g0-h0) > 0.05*h0 {
		bad = append(bad, "goodput")
	}
	if math.Abs(ours.Utilisation-theirs.Utilisation) > 0.03 {
		bad = append(bad, "util")
	}
	if math.Abs(ours.Jain-theirs.Jain) > 0.05 {
		bad = append(bad, "jain")
	}
	if !within(float64(retrans(ours.Flows)), float64(retrans(theirs.Flows)), 1.5) {
		bad = append(bad, "retrans")
	}
	return comparison{ours: ours, ns3: theirs, outside: bad}
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
		Queue: c.bdp(), Qdisc: "droptail", Duration: d, DelAck: delAck, Seed: 1, Profile: tcp.NS3(), NoFRTO: true, CountACKs: countACKs,
		NS3Semantics: ns3Semantics}
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

// ns3Cache is -ns3-from's rows by cell, nil without the flag.
var ns3Cache map[string]*dumbbell.Result

// readTable reads ns-3's side of a table main printed: per row the cell,
// flow 0's goodput, utilisation, Jain's index, the retransmissions of
// all flows (booked to flow 0), events and wall time, each the value
// after the "/". The per-flow split is not in the table, and the bounds
// need only these.
func readTable(path string) (map[string]*dumbbell.Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("-ns3-from: %w", err)
	}
	rows := map[string]*dumbbell.Result{}
	for n, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, "|")
		if len(f) < 9 || !strings.Contains(f[1], "×") {
			continue
		}
		var v [6]float64
		for i := range v {
			_, theirs, ok := strings.Cut(f[2+i], "/")
			if !ok {
				return nil, fmt.Errorf("%s:%d: column %d %q: want ours / ns-3", path, n+1, 2+i, f[2+i])
			}
			if v[i], err = strconv.ParseFloat(strings.TrimSpace(theirs), 64); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, n+1, err)
			}
		}
		key := strings.TrimSpace(f[1])
		if _, dup := rows[key]; dup {
			return nil, fmt.Errorf("%s:%d: %s twice", path, n+1, key)
		}
		rows[key] = &dumbbell.Result{Flows: []dumbbell.FlowResult{{GoodputMbps: v[0], Retransmits: uint64(v[3])}},
			Utilisation: v[1], Jain: v[2], Events: uint64(v[4]), WallS: v[5]}
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("-ns3-from: %s has no table rows", path)
	}
	return rows, nil
}

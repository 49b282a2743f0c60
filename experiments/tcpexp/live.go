package tcpexp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/pseudocong/pseudocong/experiments"
	"github.com/pseudocong/pseudocong/experiments/live"
	"github.com/pseudocong/pseudocong/netsim"
)

// The live backend of a TCP spec (paper-tcp's live cell, issue 10 item
// 7): the spec's cache cells with kernel TCP (Linux's own timers and
// stack) through our live switch, the spec's profile against its
// reference, and the same cells simulated ("ours") with the live run's
// duration, side by side. What it cannot run it names in
// LiveResult.Skipped:
//
//   - timers other than linux: the Berkeley profile has no live
//     counterpart (the kernel's timers are Linux's; there is no 500 ms
//     BSD clock to switch to);
//   - cells with a base load: the sim preloads the flows' rules straight
//     into the backing table while the base load fills the TCAM; through
//     OpenFlow every new rule goes into the TCAM first (evicting), so the
//     near-full-table cell's free slots and backing-table rules cannot be
//     set up (the probe cells' data kind has the same limit);
//   - mitigations specs.

// LiveSpec is a spec's live section (optional).
type LiveSpec struct {
	// Duration of every live bulk run; 0: the spec's duration.
	Duration time.Duration `yaml:"duration"`
	// Rounds repeats the profile-beside-reference runs this many times
	// (each round two fresh testbeds); 0: 1.
	Rounds int `yaml:"rounds"`
}

// maxLiveRounds bounds rounds (a typo guard).
const maxLiveRounds = 10

// LiveOptions adjust a live run.
type LiveOptions struct {
	// Binary is the pseudocong executable for the controller and switch
	// processes (default: this executable).
	Binary string
	// Testbed names the testbeds: Testbed+"p" for the profile's, +"r"
	// for the reference's (so at most 9 bytes); default: random names.
	Testbed string
	// Duration and Rounds, if set, replace the spec's live section.
	Duration time.Duration
	Rounds   int
	// Workers is the sim's parallelism (the sims run before the live
	// runs, never beside them).
	Workers       int
	ProcessOutput io.Writer
	Progress      func(done, total int, label string)
	Logger        *slog.Logger
}

// LiveTimers is the only timer profile the live backend runs.
const LiveTimers = "linux"

// LiveCell is one cell's live runs.
type LiveCell struct {
	Cell CellSpec
	// Profile and Reference hold one run per round.
	Profile, Reference []live.BulkResult
}

// LiveResult is a finished live run.
type LiveResult struct {
	Spec *Spec
	// Sim is ours: the live cells simulated with Linux timers and the
	// live duration.
	Sim      *Result
	Cells    []LiveCell
	Duration time.Duration
	Rounds   int
	// Link is the emulation on the switch's ports (from the topology).
	Link LiveLink
	// Skipped names what the spec asks for and the live backend does not
	// run, and why.
	Skipped []string
	Values  map[string][]float64
	Wall    time.Duration
}

// LiveLink is the topology's links as the live switch's port emulation:
// the line rate and queue of the links, and the one-way delay of the whole
// host-to-host path on each switch port's egress (the live hosts' own
// veths add microseconds).
type LiveLink struct {
	Rate, Qdisc string
	Delay       time.Duration
}

// LiveCells splits the spec's cells into those the live backend runs and
// the reasons for the rest.
func LiveCells(s *Spec) (run []CellSpec, skipped []string) {
	for _, t := range s.Timers {
		if t != LiveTimers {
			skipped = append(skipped, fmt.Sprintf("timers %s: no live counterpart (the kernel's TCP runs Linux's timers)", t))
		}
	}
	for _, c := range s.Cells {
		if c.BaseLoad > 0 || c.TCAMCapacity == 0 {
			tcam := "the profile's full TCAM"
			if c.TCAMCapacity > 0 {
				tcam = fmt.Sprintf("a TCAM scaled to %d entries", c.TCAMCapacity)
			}
			skipped = append(skipped, fmt.Sprintf("cell %s: base load %d on %s: the flows' rules must start in the backing table "+
				"with the TCAM's free slots left free, which no OpenFlow message can ask for (only cache cells, a scaled TCAM and no base load, run live)",
				c.ID, c.BaseLoad, tcam))
			continue
		}
		run = append(run, c)
	}
	return run, skipped
}

// liveLink maps the topology to port emulation: two links (client and
// server to the switch) of one rate and queue.
func liveLink(top *netsim.Topology) (LiveLink, error) {
	if len(top.Links) != 2 || len(top.Switches) != 1 {
		return LiveLink{}, fmt.Errorf("topology %s: the live backend runs one switch between two hosts (%d switches, %d links)", top.Name, len(top.Switches), len(top.Links))
	}
	a, b := top.Links[0], top.Links[1]
	if a.Rate != b.Rate || a.Qdisc != b.Qdisc || a.QdiscA != "" || a.QdiscB != "" || b.QdiscA != "" || b.QdiscB != "" || a.Loss != "" || b.Loss != "" {
		return LiveLink{}, fmt.Errorf("topology %s: the live backend needs both links alike (rate, one qdisc, no loss)", top.Name)
	}
	var d time.Duration
	for _, l := range top.Links {
		if l.Delay == "" {
			continue
		}
		x, err := netsim.ParseTime(l.Delay)
		if err != nil {
			return LiveLink{}, fmt.Errorf("topology %s: %w", top.Name, err)
		}
		d += x
	}
	return LiveLink{Rate: a.Rate, Qdisc: a.Qdisc, Delay: d}, nil
}

// ExecuteLive runs the spec's live cells: first the simulations (ours),
// then per cell the live rounds, each the profile and the reference at
// the same time on two testbeds.
func ExecuteLive(ctx context.Context, s *Spec, opts LiveOptions) (*LiveResult, error) {
	began := time.Now()
	if len(s.Mitigations) > 0 {
		return nil, fmt.Errorf("spec %s: a mitigations spec runs on the sim backend only", s.Source)
	}
	cells, skipped := LiveCells(s)
	if len(cells) == 0 {
		return nil, fmt.Errorf("spec %s: no cell the live backend runs (%s)", s.Source, strings.Join(skipped, "; "))
	}
	dur, rounds := s.Live.Duration, s.Live.Rounds
	if opts.Duration > 0 {
		dur = opts.Duration
	}
	if opts.Rounds > 0 {
		rounds = opts.Rounds
	}
	if dur <= 0 {
		dur = s.Duration
	}
	rounds = max(rounds, 1)
	if rounds > maxLiveRounds {
		return nil, fmt.Errorf("spec %s: live rounds %d: at most %d", s.Source, rounds, maxLiveRounds)
	}
	top, err := experiments.LoadTopology(s.Topology)
	if err != nil {
		return nil, fmt.Errorf("spec %s: %w", s.Source, err)
	}
	link, err := liveLink(top)
	if err != nil {
		return nil, fmt.Errorf("spec %s: %w", s.Source, err)
	}
	// Ours: the same cells, Linux timers, the live duration.
	ss := *s
	ss.Cells, ss.Timers, ss.Duration = cells, []string{LiveTimers}, dur
	if err := ss.Validate(); err != nil {
		return nil, fmt.Errorf("spec %s with the live duration %v: %w", s.Source, dur, err)
	}
	simRes, err := Execute(ctx, &ss, Options{Workers: opts.Workers})
	if err != nil {
		return nil, err
	}
	lr := &LiveResult{Spec: s, Sim: simRes, Duration: dur, Rounds: rounds, Link: link, Skipped: skipped}
	total := len(cells) * 2 * rounds
	done := 0
	var mu sync.Mutex
	for _, c := range cells {
		lc := LiveCell{Cell: c}
		for round := range rounds {
			// The profile and the reference at the same time, each on a
			// testbed of its own: the machine's load (other jobs, its
			// drift) falls on both alike, so their ratio is the switch's.
			var runs [2][]live.BulkResult
			var errs [2]error
			var wg sync.WaitGroup
			for i, x := range []struct{ arg, role string }{{s.Profile, "p"}, {s.Reference, "r"}} {
				name := ""
				if opts.Testbed != "" {
					name = opts.Testbed + x.role
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					runs[i], errs[i] = live.RunBulk(ctx, live.BulkConfig{
						Binary: opts.Binary, Name: name, Profiles: []live.BulkProfile{{Arg: x.arg, TCAMCapacity: c.TCAMCapacity}},
						Flows: c.Flows, Rate: c.StartRate, Priority: c.Priority, Duration: dur, SampleInterval: s.TraceInterval,
						CC: kernelCC(s.CC), PortRate: link.Rate, PortQdisc: link.Qdisc, PortDelay: fmt.Sprintf("%dus", link.Delay.Microseconds()),
						ProcessOutput: opts.ProcessOutput, Logger: opts.Logger,
						Progress: func(_, _ int, label string) {
							mu.Lock()
							defer mu.Unlock()
							done++
							if opts.Progress != nil {
								opts.Progress(done, total, fmt.Sprintf("%s round %d %s", c.ID, round+1, label))
							}
						},
					})
				}()
			}
			wg.Wait()
			if err := errors.Join(errs[0], errs[1]); err != nil {
				return nil, fmt.Errorf("cell %s round %d: %w", c.ID, round+1, err)
			}
			lc.Profile = append(lc.Profile, runs[0]...)
			lc.Reference = append(lc.Reference, runs[1]...)
		}
		lr.Cells = append(lr.Cells, lc)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	lr.Values = lr.summarize()
	lr.Wall = time.Since(began)
	return lr, nil
}

// kernelCC is the kernel's name of the spec's algorithm: package tcp's
// newreno is Linux's reno (NewReno recovery is the kernel's own).
func kernelCC(cc string) string {
	switch cc {
	case "", "newreno", "reno":
		return "reno"
	}
	return cc
}

// liveMetrics are one live run's aggregates, in flowMetrics' terms plus
// the namespace's nstat counters per flow.
type liveMetrics struct {
	flowMetrics
	nstatTimeouts, retransSegs, established float64
}

func liveMetricsOf(r live.BulkResult) liveMetrics {
	var m liveMetrics
	var bytes uint64
	for _, f := range r.Flows {
		bytes += f.Received
		m.timeouts += float64(f.Timeouts)
		m.synRetrans += float64(f.SYNRetrans)
		m.cwnd1 += f.ShareCwnd1
		if f.Established {
			m.established++
		}
	}
	n := float64(len(r.Flows))
	m.goodputMbps = float64(bytes) * 8 / r.Duration.Seconds() / 1e6
	m.timeouts /= n
	m.synRetrans /= n
	m.cwnd1 /= n
	m.established /= n
	m.nstatTimeouts = float64(r.Nstat["TcpExtTCPTimeouts"]) / n
	m.retransSegs = float64(r.Nstat["TcpRetransSegs"]) / n
	return m
}

// meanOf pools rounds: goodput summed (the ratio of sums), the rest
// averaged.
func meanOf(rs []live.BulkResult) liveMetrics {
	var m liveMetrics
	for _, r := range rs {
		x := liveMetricsOf(r)
		m.goodputMbps += x.goodputMbps
		m.timeouts += x.timeouts
		m.synRetrans += x.synRetrans
		m.cwnd1 += x.cwnd1
		m.established += x.established
		m.nstatTimeouts += x.nstatTimeouts
		m.retransSegs += x.retransSegs
	}
	n := float64(len(rs))
	m.goodputMbps /= n
	m.timeouts /= n
	m.synRetrans /= n
	m.cwnd1 /= n
	m.established /= n
	m.nstatTimeouts /= n
	m.retransSegs /= n
	return m
}

// Live summary keys (docs/experiments.md "paper-tcp live"):
//
//	<cell>.<metric>.linux          ours: the sim's keys for the same cell, Linux timers, live duration
//	live.<cell>.<metric>.linux     the kernel's, the same metrics (rounds pooled)
//	live.<cell>.ref.<metric>.linux the kernel's through the reference switch
//	live.<cell>.nstat_timeouts_per_flow.linux, live.<cell>.retrans_segs_per_flow.linux
//	                               the client namespace's TcpExtTCPTimeouts and TcpRetransSegs per flow
//	live.<cell>.established_share.linux   flows that connected
//	live.<cell>.swap_ins, live.<cell>.queue_drops, live.<cell>.model_drops  the profile switch's counters per run
//	live.<cell>.rounds.goodput_ratio.linux  the ratio of each round
//
// with <metric> goodput_ratio, goodput_mbps, timeouts_per_flow,
// share_time_cwnd1, syn_retrans_per_flow (as the sim's).
func (lr *LiveResult) summarize() map[string][]float64 {
	v := map[string][]float64{}
	sf := "." + LiveTimers
	for _, lc := range lr.Cells {
		id := lc.Cell.ID
		if p, ref := lr.Sim.find(id, LiveTimers, RoleProfile, BaselineName), lr.Sim.find(id, LiveTimers, RoleReference, ""); p != nil && ref != nil {
			pm, rm := metricsOf(p.Outcome), metricsOf(ref.Outcome)
			k := id + "."
			v[k+"goodput_ratio"+sf] = []float64{ratio(pm.goodputMbps, rm.goodputMbps)}
			v[k+"timeouts_per_flow"+sf] = []float64{pm.timeouts}
			v[k+"share_time_cwnd1"+sf] = []float64{pm.cwnd1}
			v[k+"syn_retrans_per_flow"+sf] = []float64{pm.synRetrans}
			v[k+"goodput_mbps"+sf] = []float64{pm.goodputMbps}
			v[k+"ref.goodput_mbps"+sf] = []float64{rm.goodputMbps}
			v[k+"ref.timeouts_per_flow"+sf] = []float64{rm.timeouts}
			v[k+"ref.share_time_cwnd1"+sf] = []float64{rm.cwnd1}
			v[k+"ref.syn_retrans_per_flow"+sf] = []float64{rm.synRetrans}
		}
		pm, rm := meanOf(lc.Profile), meanOf(lc.Reference)
		k := "live." + id + "."
		v[k+"goodput_ratio"+sf] = []float64{ratio(pm.goodputMbps, rm.goodputMbps)}
		for _, x := range []struct {
			key  string
			p, r float64
		}{
			{"goodput_mbps", pm.goodputMbps, rm.goodputMbps},
			{"timeouts_per_flow", pm.timeouts, rm.timeouts},
			{"share_time_cwnd1", pm.cwnd1, rm.cwnd1},
			{"syn_retrans_per_flow", pm.synRetrans, rm.synRetrans},
			{"nstat_timeouts_per_flow", pm.nstatTimeouts, rm.nstatTimeouts},
			{"retrans_segs_per_flow", pm.retransSegs, rm.retransSegs},
			{"established_share", pm.established, rm.established},
		} {
			v[k+x.key+sf] = []float64{x.p}
			v[k+"ref."+x.key+sf] = []float64{x.r}
		}
		var perRound []float64
		for i := range lc.Profile {
			if i < len(lc.Reference) {
				perRound = append(perRound, ratio(liveMetricsOf(lc.Profile[i]).goodputMbps, liveMetricsOf(lc.Reference[i]).goodputMbps))
			}
		}
		v[k+"rounds.goodput_ratio"+sf] = perRound
		var swaps, qd, md float64
		for _, r := range lc.Profile {
			swaps += r.SwapIns
			qd += r.QueueDrops
			md += r.ModelDrops
		}
		n := float64(len(lc.Profile))
		v[k+"swap_ins"] = []float64{swaps / n}
		v[k+"queue_drops"] = []float64{qd / n}
		v[k+"model_drops"] = []float64{md / n}
	}
	return v
}

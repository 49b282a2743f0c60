package tcpexp

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/pseudocong/pseudocong/experiments"
	"github.com/pseudocong/pseudocong/experiments/live"
	"github.com/pseudocong/pseudocong/tcp"
)

// WriteLiveOutputs writes a live run's outputs into dir (WriteOutputs'
// staging contract): summary.json (backend live), report.md (ours beside
// the kernel's), flows.csv (every flow of both backends), and per live
// cell the cwnd traces of ours (<cell>_linux_{profile|reference}_cwnd.*)
// and of the kernel's first round (live_<cell>_linux_..._cwnd.*), CSV and
// PNG.
func WriteLiveOutputs(dir string, lr *LiveResult) ([]string, error) {
	return stageOutputs(dir, func(stage string) ([]string, error) { return lr.writeAll(stage) })
}

func (lr *LiveResult) writeAll(dir string) ([]string, error) {
	o := &outputFiles{dir: dir}
	write := o.write
	if err := o.start(lr.Summary(), lr.writeFlows); err != nil {
		return nil, err
	}
	sim := lr.Sim
	for _, b := range sim.Runs {
		if b.Outcome == nil {
			continue
		}
		sw := sim.switchName(b)
		traces := b.Outcome.TCP.Traces
		base := fmt.Sprintf("%s_%s_%s_cwnd", b.Cell.ID, b.Timers, b.Role)
		if err := writeTraces(write, base, fmt.Sprintf("ours (sim) %s: cwnd of %d bulk flows, %s timers, %s", b.Cell.ID, len(traces), b.Timers, sw), traces); err != nil {
			return nil, err
		}
	}
	for _, lc := range lr.Cells {
		for _, x := range []struct {
			role string
			runs []live.BulkResult
		}{{RoleProfile, lc.Profile}, {RoleReference, lc.Reference}} {
			if len(x.runs) == 0 {
				continue
			}
			r := x.runs[0]
			traces := make([]*tcp.Trace, len(r.Flows))
			for i := range r.Flows {
				traces[i] = &r.Flows[i].Trace
			}
			base := fmt.Sprintf("live_%s_%s_%s_cwnd", lc.Cell.ID, LiveTimers, x.role)
			title := fmt.Sprintf("kernel TCP %s: cwnd (TCP_INFO) of %d bulk flows, %s, TCAM %d", lc.Cell.ID, len(traces), r.Profile, r.TCAMCapacity)
			if err := writeTraces(write, base, title, traces); err != nil {
				return nil, err
			}
		}
	}
	if err := write(ReportFile, lr.writeReport); err != nil {
		return nil, err
	}
	return o.files, nil
}

// Summary is summary.json of the live run (backend "live").
func (lr *LiveResult) Summary() experiments.Summary {
	s := experiments.Summary{Spec: lr.Spec.Name, Backend: experiments.BackendLive, Profile: lr.Sim.Profile.Name, Seed: lr.Sim.Seed,
		WallSeconds: math.Round(lr.Wall.Seconds()*1000) / 1000, Results: map[string]any{}, Paper: map[string]any{}}
	for k, v := range lr.Values {
		if len(v) == 1 {
			s.Results[k] = round12(v[0])
			continue
		}
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = round12(x)
		}
		s.Results[k] = out
	}
	return s
}

func (lr *LiveResult) writeFlows(w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"backend", "cell", "timers", "switch", "round", "flow", "established", "goodput_mbps", "received_bytes",
		"timeouts", "syn_retrans", "retrans_segs", "time_cwnd1_s", "share_cwnd1", "handshake_s", "error"})
	sim := lr.Sim
	for _, b := range sim.Runs {
		if b.Outcome == nil {
			continue
		}
		sw := sim.switchName(b)
		for i, f := range b.Outcome.TCP.Flows {
			st := f.Sender
			_ = cw.Write([]string{"sim", b.Cell.ID, b.Timers, sw, "1", strconv.Itoa(i), strconv.FormatBool(f.Established),
				fmt.Sprintf("%.6f", f.GoodputBps()/1e6), strconv.FormatUint(f.Received, 10),
				strconv.FormatUint(st.TCPTimeouts, 10), strconv.FormatUint(st.TCPSynRetrans, 10), strconv.FormatUint(st.RetransSegs, 10),
				fmt.Sprintf("%.6f", f.TimeCwnd1.Seconds()), fmt.Sprintf("%.6f", f.ShareCwnd1), "", ""})
		}
	}
	for _, lc := range lr.Cells {
		for _, runs := range [][]live.BulkResult{lc.Profile, lc.Reference} {
			for round, r := range runs {
				for i, f := range r.Flows {
					_ = cw.Write([]string{"live", lc.Cell.ID, LiveTimers, r.Profile, strconv.Itoa(round + 1), strconv.Itoa(i), strconv.FormatBool(f.Established),
						fmt.Sprintf("%.6f", f.GoodputBps()/1e6), strconv.FormatUint(f.Received, 10),
						strconv.FormatUint(f.Timeouts, 10), strconv.FormatUint(f.SYNRetrans, 10), strconv.FormatUint(f.Retrans, 10),
						fmt.Sprintf("%.6f", f.TimeCwnd1.Seconds()), fmt.Sprintf("%.6f", f.ShareCwnd1), fmt.Sprintf("%.6f", f.Handshake.Seconds()), f.Err})
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

func (lr *LiveResult) writeReport(w io.Writer) error {
	s := lr.Spec
	p, ref := lr.Sim.Profile.Name, lr.Sim.Reference.Name
	fmt.Fprintf(w, "# %s — live\n\n%s\n\n", s.Name, strings.TrimSpace(s.Description))
	fmt.Fprintf(w, "Kernel TCP (Linux %s, its own timers and stack: RACK, TLP, F-RTO) from a socket per flow in host 1's namespace "+
		"to a sink in host 2's, through `pseudocong switch --profile %s` and, at the same time on a testbed of its own, `--profile %s`, each with a fresh proactive "+
		"controller (`pseudocong controller --app proactive`) that pushes every flow's two rules when the switch connects. "+
		"Ports: %s, %s drop-tail, %v one way on each switch port's egress (topology %s). cwnd, ssthresh, RTT, RTO and "+
		"retransmissions sampled from TCP_INFO every %v; timeouts are tcpi_total_rto (and TcpExtTCPTimeouts from nstat in the "+
		"client namespace). %d round(s) of %v per switch. Ours: the same cells simulated with Linux "+
		"timers for %v (seed %d). Wall %.1f s.\n\n",
		kernelCC(s.CC), p, ref, lr.Link.Rate, lr.Link.Qdisc, lr.Link.Delay, s.Topology, s.TraceInterval, lr.Rounds, lr.Duration,
		lr.Duration, lr.Sim.Seed, lr.Wall.Seconds())
	if len(lr.Skipped) > 0 {
		fmt.Fprintf(w, "Not run live:\n\n")
		for _, x := range lr.Skipped {
			fmt.Fprintf(w, "* %s\n", x)
		}
		fmt.Fprintln(w)
	}
	get := func(k string) string { v, ok := lr.Values[k]; return fmtVal(v, ok) }
	for _, lc := range lr.Cells {
		c := lc.Cell
		fmt.Fprintf(w, "## %s — %s\n\n%d bulk flows starting at %g/s; TCAM scaled to %d entries; %s priorities.\n\n",
			c.ID, c.Title, c.Flows, c.StartRate, c.TCAMCapacity, c.Priority)
		fmt.Fprintf(w, "| measure | ours %s | ours %s | kernel %s | kernel %s |\n| --- | ---: | ---: | ---: | ---: |\n", p, ref, p, ref)
		o, l := c.ID+".", "live."+c.ID+"."
		sf := "." + LiveTimers
		row := func(label, key string) {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", label, get(o+key+sf), get(o+"ref."+key+sf), get(l+key+sf), get(l+"ref."+key+sf))
		}
		row("goodput (Mbit/s)", "goodput_mbps")
		fmt.Fprintf(w, "| goodput ratio | %s | | %s | |\n", get(o+"goodput_ratio"+sf), get(l+"goodput_ratio"+sf))
		row("timeouts per flow", "timeouts_per_flow")
		fmt.Fprintf(w, "| TcpExtTCPTimeouts per flow (nstat) | | | %s | %s |\n", get(l+"nstat_timeouts_per_flow"+sf), get(l+"ref.nstat_timeouts_per_flow"+sf))
		fmt.Fprintf(w, "| TcpRetransSegs per flow (nstat) | | | %s | %s |\n", get(l+"retrans_segs_per_flow"+sf), get(l+"ref.retrans_segs_per_flow"+sf))
		row("SYN retransmissions per flow", "syn_retrans_per_flow")
		row("share of time at cwnd = 1", "share_time_cwnd1")
		fmt.Fprintf(w, "\nKernel goodput ratio per round: %s. Switch %s per run: %s swap-ins, %s frames dropped by the port queues, "+
			"%s by the modelled data plane and agent.\n\n", fmtList(lr.Values[l+"rounds.goodput_ratio"+sf]), p, get(l+"swap_ins"), get(l+"queue_drops"), get(l+"model_drops"))
		fmt.Fprintf(w, "cwnd traces: ours `%s_linux_{profile,reference}_cwnd.{csv,png}`, kernel (round 1) `live_%s_linux_{profile,reference}_cwnd.{csv,png}`.\n\n", c.ID, c.ID)
	}
	fmt.Fprintf(w, "## Summary keys\n\n| key | value |\n| --- | ---: |\n")
	for _, k := range sortedKeys(lr.Values) {
		v := lr.Values[k]
		val := fmtVal(v, true)
		if len(v) > 1 {
			val = fmtList(v)
		}
		fmt.Fprintf(w, "| `%s` | %s |\n", k, val)
	}
	return nil
}

func fmtList(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.FormatFloat(x, 'g', 3, 64)
	}
	return strings.Join(parts, ", ")
}

package tcpexp

import (
	"math"
	"slices"

	"github.com/pseudocong/pseudocong/experiments/sim"
)

// Summary keys (docs/experiments.md "TCP specs"):
//
//	<cell>.goodput_ratio[.<timers>]        aggregate goodput, profile / reference
//	<cell>.timeouts_per_flow[.<timers>]    sender RTO expiries (SYN and data) per flow, profile
//	<cell>.share_time_cwnd1[.<timers>]     mean share of traced time at cwnd = 1, profile
//	<cell>.syn_retrans_per_flow[.<timers>] SYN retransmissions per flow, profile
//	<cell>.goodput_mbps[.<timers>]         aggregate goodput, profile
//	<cell>.ref.<metric>[.<timers>]         the same through the reference switch
//
// The timers part is there when the spec has more than one timer
// profile. A mitigations spec puts "mitigation.<name>." before each key
// and adds the probe cells' keys and mitigation.<name>.tcam_space_lost.

// flowMetrics are the per-run aggregates.
type flowMetrics struct {
	goodputMbps, timeouts, cwnd1, synRetrans float64
}

func metricsOf(o *sim.Outcome) flowMetrics {
	t := o.TCP
	var m flowMetrics
	var bytes uint64
	for _, f := range t.Flows {
		bytes += f.Received
		m.timeouts += float64(f.Sender.TCPTimeouts)
		m.synRetrans += float64(f.Sender.TCPSynRetrans)
		m.cwnd1 += f.ShareCwnd1
	}
	n := float64(len(t.Flows))
	m.goodputMbps = float64(bytes) * 8 / t.Duration.Seconds() / 1e6
	m.timeouts /= n
	m.synRetrans /= n
	m.cwnd1 /= n
	return m
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

// find returns the run of cell id, timers and role under mitigation.
func (r *Result) find(cell, timers, role, mitigation string) *BulkRun {
	for i := range r.Runs {
		b := &r.Runs[i]
		if b.Cell.ID == cell && b.Timers == timers && b.Role == role && (role == RoleReference || b.Mitigation == mitigation) {
			return b
		}
	}
	return nil
}

func summarize(r *Result) map[string][]float64 {
	v := map[string][]float64{}
	s := r.Spec
	suffix := func(t string) string {
		if len(s.Timers) > 1 {
			return "." + t
		}
		return ""
	}
	var baseProbe map[string][]float64
	for _, mr := range r.Mitigation {
		if mr.Mitigation.Name == BaselineName {
			baseProbe = mr.Probe
		}
	}
	for _, mr := range r.Mitigation {
		name := mr.Mitigation.Name
		prefix := ""
		if len(s.Mitigations) > 0 {
			prefix = "mitigation." + name + "."
			v[prefix+"tcam_space_lost"] = []float64{mr.SpaceLost}
			v[prefix+"switch_cpu_s"] = []float64{mr.SwitchCPU.Seconds()}
			probe := mr.Probe
			if probe == nil {
				probe = baseProbe // the switch is unchanged: the baseline's cells
			}
			for k, pv := range probeKeys(probe) {
				v[prefix+k] = pv
			}
		}
		for _, c := range s.Cells {
			for _, t := range s.Timers {
				p, ref := r.find(c.ID, t, RoleProfile, name), r.find(c.ID, t, RoleReference, "")
				if p == nil || ref == nil || p.Outcome == nil || ref.Outcome == nil {
					continue
				}
				pm, rm := metricsOf(p.Outcome), metricsOf(ref.Outcome)
				k := prefix + c.ID + "."
				sf := suffix(t)
				v[k+"goodput_ratio"+sf] = []float64{ratio(pm.goodputMbps, rm.goodputMbps)}
				v[k+"timeouts_per_flow"+sf] = []float64{pm.timeouts}
				v[k+"share_time_cwnd1"+sf] = []float64{pm.cwnd1}
				v[k+"syn_retrans_per_flow"+sf] = []float64{pm.synRetrans}
				v[k+"goodput_mbps"+sf] = []float64{pm.goodputMbps}
				if prefix == "" || name == BaselineName {
					v[k+"ref.goodput_mbps"+sf] = []float64{rm.goodputMbps}
					v[k+"ref.timeouts_per_flow"+sf] = []float64{rm.timeouts}
					v[k+"ref.share_time_cwnd1"+sf] = []float64{rm.cwnd1}
					v[k+"ref.syn_retrans_per_flow"+sf] = []float64{rm.synRetrans}
				}
			}
		}
	}
	return v
}

// probeKeys renames the probe cells' values to the mitigation keys.
func probeKeys(p map[string][]float64) map[string][]float64 {
	out := map[string][]float64{}
	if p == nil {
		return out
	}
	if x, ok := p["fig5.max_delay_s"]; ok {
		out["fig5.max_delay_s"] = x
	}
	if x, ok := p["table1.max_delay_s"]; ok {
		out["table1.max_delay_s.5000pps"] = x
	}
	for _, r := range []string{"10pps", "5000pps"} {
		if b, ok := p["handshake.bins."+r]; ok && len(b) > 0 {
			out["handshake.syn_retx_share.L3500."+r] = []float64{1 - b[0]}
		}
	}
	if x, ok := p["data.share_gt_1.5s"]; ok {
		out["data.share_gt_1.5s.L3500.10pps"] = x
	}
	return out
}

// sortedKeys returns m's keys sorted.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

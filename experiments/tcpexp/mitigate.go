package tcpexp

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pseudocong/pseudocong/agent"
	"github.com/pseudocong/pseudocong/experiments"
	"github.com/pseudocong/pseudocong/experiments/sim"
	"github.com/pseudocong/pseudocong/profile"
	"github.com/pseudocong/pseudocong/tcam"
)

// A mitigation is a "+"-joined set of tokens, each one mechanism:
//
//	a TCAM layout      tcam.LayoutNames(): highest-first, lowest-first,
//	                   gap-K, ruletris, fastrule, hermes
//	a Packet-In policy agent.Policies(): install_first, fifo,
//	                   per_port_fair, syn_first, rate_limited
//	controller side    descending (the app numbers rules in descending
//	                   priority order, as a Tango-style reordering of a
//	                   burst of FLOW_MODs does), cover_rules (wildcard
//	                   cover rules instead of per-flow rules; bulk cells
//	                   only)
//	SDN-aware TCP      allowance (first-packet allowance of 3 s), frto
//	                   (F-RTO + Eifel undo), linear_syn (4 linear SYN
//	                   timeouts), keep_iw (no IW 1 after a SYN
//	                   retransmission); bulk cells only: the probe cells
//	                   have fixed timers by construction
//
// "baseline" is none of them.

// Mitigation is one parsed mitigation.
type Mitigation struct {
	Name       string
	Layout     string
	Policy     agent.Policy
	Descending bool
	SDN        sim.SDNOptions
}

// FirstPacketAllowance is the allowance of the "allowance" token: 3 s,
// RFC 1122's initial RTO, the longest a flow's first packet waited in
// the paper's 10 pps cells (Fig. 19).
const FirstPacketAllowance = 3 * time.Second

// linearSYNCount is linear_syn's count (Linux 6.18's default of 4).
const linearSYNCount = 4

// rateLimitedRate and rateLimitedBurst configure rate_limited: OVS's
// controller_rate_limit default of 1 000 per second and burst rate/4.
const (
	rateLimitedRate  = 1000
	rateLimitedBurst = 250
)

// BaselineName names the unmitigated switch.
const BaselineName = "baseline"

// ParseMitigation parses a mitigation name.
func ParseMitigation(name string) (Mitigation, error) {
	m := Mitigation{Name: name}
	if name == BaselineName {
		return m, nil
	}
	if name == "" {
		return m, fmt.Errorf("empty mitigation name")
	}
	for _, tok := range strings.Split(name, "+") {
		switch {
		case tok == "descending":
			m.Descending = true
		case tok == "cover_rules":
			m.SDN.CoverRules = true
		case tok == "allowance":
			m.SDN.FirstPacketAllowance = FirstPacketAllowance
		case tok == "frto":
			m.SDN.FRTO = true
		case tok == "linear_syn":
			m.SDN.LinearSYN = linearSYNCount
		case tok == "keep_iw":
			m.SDN.KeepIW = true
		case slices.Contains(agent.Policies(), agent.Policy(tok)):
			if m.Policy != "" {
				return m, fmt.Errorf("mitigation %q: two Packet-In policies", name)
			}
			m.Policy = agent.Policy(tok)
		default:
			if _, err := tcam.LayoutByName(tok); err != nil || tok == "" {
				return m, fmt.Errorf("mitigation %q: unknown token %q (a TCAM layout %v, a Packet-In policy %v, descending, cover_rules, allowance, frto, linear_syn or keep_iw)",
					name, tok, tcam.LayoutNames(), agent.Policies())
			}
			if m.Layout != "" {
				return m, fmt.Errorf("mitigation %q: two TCAM layouts", name)
			}
			m.Layout = tok
		}
	}
	return m, nil
}

// switchSide reports whether the mitigation changes the switch or the
// controller (and so the probe cells).
func (m Mitigation) switchSide() bool { return m.Layout != "" || m.Policy != "" || m.Descending }

// Apply returns base with the mitigation's layout and policy.
func (m Mitigation) Apply(base *profile.Profile) (*profile.Profile, error) {
	p := *base
	if m.Layout != "" {
		p.TCAM.Layout = m.Layout
	}
	if m.Policy != "" {
		p.Agent.Scheduling = m.Policy
		if m.Policy == agent.RateLimited {
			p.Agent.RateLimit, p.Agent.BurstLimit = rateLimitedRate, rateLimitedBurst
		}
	}
	if m.Layout != "" || m.Policy != "" {
		p.Name = base.Name + "+" + strings.Trim(m.Layout+"+"+string(m.Policy), "+")
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("mitigation %s: %w", m.Name, err)
	}
	return &p, nil
}

// SpaceLost is the share of the TCAM's slots the mitigation's layout
// keeps out of use (hermes's shadow slice; every other layout 0), plus
// for cover rules nothing (two entries are rules, not lost space).
func (m Mitigation) SpaceLost(p *profile.Profile) (float64, error) {
	u, err := usableSlots(p)
	if err != nil {
		return 0, err
	}
	return 1 - float64(u)/float64(p.TCAM.Capacity), nil
}

// usableSlots is how many entries p's TCAM can hold under its layout.
func usableSlots(p *profile.Profile) (int, error) {
	l, err := p.TCAMLayout()
	if err != nil {
		return 0, err
	}
	t, err := tcam.New(p.TCAM.Capacity, l, p.TCAM.Timing)
	if err != nil {
		return 0, err
	}
	return t.Usable(), nil
}

// probeSpec is the paper's worst probe cells (issue 11 item 4) as a spec
// of package experiments: Fig. 5 ascending (4 000 flows at 10 pps), the
// handshake at L = 3 500 at 10 and 5 000 pps, the data experiment at
// L = 3 500 at 10 pps, Table 1 at 5 000 pps. "reduced" keeps each cell's
// base load and rates and cuts its flows (fig5 to 1 000, handshake and
// data to 100, table1 to 400), for tests.
func probeSpec(s *Spec, m Mitigation, size string) (*experiments.Spec, error) {
	prio := experiments.PriorityAscending
	if m.Descending {
		prio = experiments.PriorityDescending
	}
	fig5, hs, data := 4000, 250, 250
	if size == "reduced" {
		fig5, hs, data = 1000, 100, 100
	}
	ps := &experiments.Spec{
		Name: s.Name + "-probes", Profile: s.Profile, Timers: "berkeley", Seed: s.Seed,
		Controller: experiments.ControllerSpec{ServiceTime: 1950 * time.Microsecond},
		Network:    experiments.NetworkSpec{LinkLatency: time.Microsecond},
		Runs: []experiments.ExperimentSpec{
			{ID: "fig5", Kind: experiments.KindPacketIn, Flows: fig5, Rates: []float64{10}, BaseLoads: []int{0}, Priorities: []string{prio}, Metrics: []string{"max_delay_s"}},
			{ID: "handshake", Kind: experiments.KindHandshake, Flows: hs, Rates: []float64{10, 5000}, BaseLoads: []int{3500}, Priorities: []string{prio}, Metrics: []string{"bins"}},
			{ID: "data", Kind: experiments.KindData, Flows: data, Rates: []float64{10}, BaseLoads: []int{3500}, Priorities: []string{prio}, Metrics: []string{"share"}},
			{ID: "table1", Kind: experiments.KindPacketIn, Flows: 400, Rates: []float64{5000}, BaseLoads: []int{0}, Priorities: []string{experiments.PriorityConstant}, Metrics: []string{"max_delay_s"}},
		},
		Source: s.Source + " (probe cells)",
	}
	return ps, ps.Validate()
}

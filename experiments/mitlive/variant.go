package mitlive

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pseudocong/pseudocong/experiments"
	"github.com/pseudocong/pseudocong/experiments/live"
	"github.com/pseudocong/pseudocong/experiments/tcpexp"
	"github.com/pseudocong/pseudocong/profile"
)

// A variant is a "+"-joined set of tokens:
//
//	switch and controller  tcpexp's mitigation tokens: a TCAM layout
//	                       (lowest-first, gap-K, ruletris, fastrule,
//	                       hermes, ...), a Packet-In policy (fifo,
//	                       per_port_fair, syn_first, rate_limited, ...),
//	                       descending (the controller's priorities),
//	                       cover_rules (one wildcard rule per ingress port
//	                       pushed with the base load)
//	Linux, client netns    tcp_<knob>=V sets net.ipv4.tcp_<knob> (e.g.
//	                       tcp_frto=0, tcp_syn_linear_timeouts=0);
//	                       rto_min=DUR gives the client's route to the
//	                       server a per-route rto_min (whole ms)
//
// "baseline" is none of them: the base profile as it is, Linux's defaults.
// The simulator's TCP options (allowance, frto, linear_syn, keep_iw) have
// no live meaning (the kernel is real) and are refused.

// DefaultVariants is the comparison `pseudocong mitigations live` runs:
// the baseline, the simulator's best layout and both candidate Packet-In
// policies (per_port_fair was the only one that helped a probe cell in
// the simulator, syn_first is in its best combinations), their
// combinations with cover rules, and the three Linux knobs each flipped
// away from 6.18's default (F-RTO on, four linear SYN timeouts, 200 ms
// minimum RTO).
var DefaultVariants = []string{
	tcpexp.BaselineName,
	"lowest-first",
	"per_port_fair",
	"syn_first",
	"lowest-first+syn_first",
	"cover_rules",
	"lowest-first+cover_rules",
	"lowest-first+syn_first+cover_rules",
	"tcp_frto=0",
	"tcp_syn_linear_timeouts=0",
	"rto_min=50ms",
}

// Variant is one parsed variant.
type Variant struct {
	Name string
	// Switch is the switch and controller side (tcpexp's parse).
	Switch tcpexp.Mitigation
	// Sysctls and RTOMin are the client-side Linux knobs.
	Sysctls []live.Sysctl
	RTOMin  time.Duration
}

// ParseVariant parses a variant name.
func ParseVariant(name string) (Variant, error) {
	v := Variant{Name: name}
	if name == tcpexp.BaselineName {
		v.Switch = tcpexp.Mitigation{Name: name}
		return v, nil
	}
	if name == "" {
		return v, fmt.Errorf("empty variant name")
	}
	var rest []string
	for _, tok := range strings.Split(name, "+") {
		key, val, isKnob := strings.Cut(tok, "=")
		switch {
		case isKnob && key == "rto_min":
			d, err := time.ParseDuration(val)
			if err != nil || d <= 0 || d%time.Millisecond != 0 {
				return v, fmt.Errorf("variant %q: rto_min=%s: want a positive whole number of milliseconds, e.g. 50ms", name, val)
			}
			if v.RTOMin != 0 {
				return v, fmt.Errorf("variant %q: two rto_min", name)
			}
			v.RTOMin = d
		case isKnob && strings.HasPrefix(key, "tcp_") && val != "" && !strings.ContainsAny(key, "./ "):
			v.Sysctls = append(v.Sysctls, live.Sysctl{Key: "net.ipv4." + key, Value: val})
		case isKnob:
			return v, fmt.Errorf("variant %q: unknown knob %q (tcp_<name>=V for net.ipv4.tcp_<name>, or rto_min=DUR)", name, tok)
		case tok == "allowance" || tok == "frto" || tok == "linear_syn" || tok == "keep_iw":
			return v, fmt.Errorf("variant %q: %s is a simulated TCP option; live runs real Linux TCP: use its knobs (tcp_frto=V, tcp_syn_linear_timeouts=V, rto_min=DUR)", name, tok)
		default:
			rest = append(rest, tok)
		}
	}
	if len(rest) > 0 {
		m, err := tcpexp.ParseMitigation(strings.Join(rest, "+"))
		if err != nil {
			return v, fmt.Errorf("variant %q: %w", name, err)
		}
		m.Name = name
		v.Switch = m
	} else {
		v.Switch = tcpexp.Mitigation{Name: name}
	}
	return v, nil
}

// switchProfile returns what the switch gets as --profile for v on base:
// base itself, or a derived profile file written into dir with v's
// layout and Packet-In policy (tcpexp.Mitigation.Apply's values), and the
// loaded profile.
func (v Variant) switchProfile(base, dir string) (string, *profile.Profile, error) {
	bp, err := profile.Load(base)
	if err != nil {
		return "", nil, err
	}
	if v.Switch.Layout == "" && v.Switch.Policy == "" {
		return base, bp, nil
	}
	p, err := v.Switch.Apply(bp)
	if err != nil {
		return "", nil, err
	}
	doc, err := profile.Document(base)
	if err != nil {
		return "", nil, err
	}
	out, err := profile.Override(doc, map[string]string{
		"name":                         p.Name,
		"tcam.layout":                  p.TCAM.Layout,
		"agent.scheduling":             string(p.Agent.Scheduling),
		"agent.controller_rate_limit":  strconv.FormatFloat(p.Agent.RateLimit, 'g', -1, 64),
		"agent.controller_burst_limit": strconv.Itoa(p.Agent.BurstLimit),
	})
	if err != nil {
		return "", nil, fmt.Errorf("variant %s: %w", v.Name, err)
	}
	path := filepath.Join(dir, strings.NewReplacer("+", "_", "=", "_").Replace(p.Name)+".yaml")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		return "", nil, err
	}
	lp, err := profile.Load(path)
	if err != nil {
		return "", nil, err
	}
	return path, lp, nil
}

// kernelVariant is v as the live backend's kernel run takes it.
func (v Variant) kernelVariant(profileArg string) live.KernelVariant {
	kv := live.KernelVariant{
		Name: v.Name, ProfileArg: profileArg,
		CoverRules:    v.Switch.SDN.CoverRules,
		ClientSysctls: v.Sysctls, RouteRTOMin: v.RTOMin,
	}
	if v.Switch.Descending {
		kv.Priority = experiments.PriorityDescending
	}
	return kv
}

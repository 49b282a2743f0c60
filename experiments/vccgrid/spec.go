package vccgrid

import (
	_ "embed"
	"fmt"
	"strings"
	"time"

	"github.com/pseudocong/pseudocong/experiments/grid"
	"github.com/pseudocong/pseudocong/netsim"
	"github.com/pseudocong/pseudocong/softswitch/vcc"
	"github.com/pseudocong/pseudocong/tcp/cc"
)

// Spec is the vcc experiment's spec file (specs/vcc.yaml).
type Spec struct {
	grid.Base `yaml:",inline"`
	RTT       time.Duration `yaml:"rtt"`
	React     string        `yaml:"react"` // vcc.ParseReact
	// RED is the bottleneck qdisc of (a), (b) and (d) (bandwidth= is added
	// from the cell's rate).
	RED string `yaml:"red"`
	A   struct {
		RateMbps float64 `yaml:"rate_mbps"`
		Senders  int     `yaml:"senders"`
		NonECN   []int   `yaml:"nonecn"`
		// ExtraRTT, if set, repeats every mix at this RTT (cells
		// n{k}.rtt{ms}): how the result depends on the window size.
		ExtraRTT time.Duration `yaml:"extra_rtt"`
	} `yaml:"a"`
	B struct {
		RateMbps   float64   `yaml:"rate_mbps"`
		AccessMbps []float64 `yaml:"access_mbps"`
		ECN        int       `yaml:"ecn"`
		NonECN     int       `yaml:"nonecn"`
	} `yaml:"b"`
	C struct {
		RateMbps    float64 `yaml:"rate_mbps"`
		ECN         int     `yaml:"ecn"`
		NonECN      int     `yaml:"nonecn"`
		MinKB       []int   `yaml:"min_kb"`
		Probability float64 `yaml:"probability"`
	} `yaml:"c"`
	D struct {
		RatesMbps []float64 `yaml:"rates_mbps"`
		ECN       int       `yaml:"ecn"`
		Tenants   int       `yaml:"tenants"`
		CC        []string  `yaml:"cc"`
	} `yaml:"d"`
	Reduced *struct {
		grid.Reduced `yaml:",inline"`
		ANonECN      []int `yaml:"a_nonecn"`
	} `yaml:"reduced"`
}

//go:embed specs/vcc.yaml
var builtin []byte

// Load returns the built-in spec for "vcc", or reads the file at path.
func Load(path string) (*Spec, error) { return grid.Load[Spec]("vcc", builtin, path) }

// Parse reads and checks a spec (name is for errors).
func Parse(b []byte, name string) (*Spec, error) { return grid.Parse[Spec]("vcc", b, name) }

// Check validates the spec: every cell's run config must be runnable.
func (s *Spec) Check() error {
	if err := s.Base.Check(); err != nil {
		return err
	}
	switch {
	case s.RTT <= 0:
		return fmt.Errorf("rtt %v: want > 0", s.RTT)
	case s.A.Senders < 1 || s.A.RateMbps <= 0:
		return fmt.Errorf("a: want senders ≥ 1 and rate_mbps > 0")
	case s.B.RateMbps <= 0 || len(s.B.AccessMbps) == 0 || s.B.ECN < 1 || s.B.NonECN < 1:
		return fmt.Errorf("b: want rate_mbps > 0, access_mbps, ecn ≥ 1 and nonecn ≥ 1")
	case s.C.RateMbps <= 0 || s.C.ECN < 1 || s.C.NonECN < 1 || s.C.Probability <= 0 || s.C.Probability > 1:
		return fmt.Errorf("c: want rate_mbps > 0, ecn ≥ 1, nonecn ≥ 1, 0 < probability ≤ 1")
	case s.D.ECN < 1 || s.D.Tenants < 1:
		return fmt.Errorf("d: want ecn ≥ 1 and tenants ≥ 1")
	}
	if _, err := vcc.ParseReact(s.React); err != nil {
		return err
	}
	for _, k := range s.A.NonECN {
		if k < 1 || k >= s.A.Senders {
			return fmt.Errorf("a: nonecn %d: want 1..%d", k, s.A.Senders-1)
		}
	}
	if r := s.Reduced; r != nil {
		if err := r.Reduced.Check(&s.Base); err != nil {
			return err
		}
		for _, k := range r.ANonECN {
			if k < 1 || k >= s.A.Senders {
				return fmt.Errorf("reduced: a_nonecn %d: want 1..%d", k, s.A.Senders-1)
			}
		}
	}
	for _, a := range s.B.AccessMbps {
		if a <= 0 {
			return fmt.Errorf("b: access_mbps %v: want > 0", a)
		}
	}
	for _, m := range s.C.MinKB {
		if m < 2 {
			return fmt.Errorf("c: min_kb %d: want at least 2", m)
		}
	}
	for _, r := range s.D.RatesMbps {
		if r <= 0 {
			return fmt.Errorf("d: rates_mbps %v: want > 0", r)
		}
	}
	for _, n := range s.D.CC {
		if _, err := cc.New(n); err != nil {
			return fmt.Errorf("d: %w", err)
		}
	}
	for _, c := range s.Cells() {
		if _, err := netsim.ParseQdisc(c.Qdisc); err != nil {
			return fmt.Errorf("cell %s: %w", c.Name, err)
		}
	}
	return nil
}

// Reduce returns the spec with its reduced overrides applied.
func (s *Spec) Reduce() *Spec {
	r := *s
	if s.Reduced == nil {
		return &r
	}
	s.Reduced.Reduced.Apply(&r.Base)
	if len(s.Reduced.ANonECN) > 0 {
		r.A.NonECN = s.Reduced.ANonECN
	}
	r.Reduced = nil
	return &r
}

// Cell is one point of the grid, run with and without vCC.
type Cell struct {
	Exp   string // a, b, c or d
	Name  string // the key part after the experiment, e.g. "n10"
	X     float64
	Label string // the figure's series or x label
	Flows []FlowConfig
	Rate  int64
	Qdisc string
	RTT   time.Duration // 0: the spec's
}

// Key is the cell's part of a summary key: {exp}.{name}.
func (c Cell) Key() string { return c.Exp + "." + c.Name }

func mbps(x float64) int64 { return int64(x * 1e6) }

func (s *Spec) red(rate int64) string {
	return fmt.Sprintf("%s,bandwidth=%dbit,seed=%d", s.RED, rate, s.Seed+1)
}

func flows(ecn, nonECN int, tenantCC string, access []int64) []FlowConfig {
	var out []FlowConfig
	for i := range ecn {
		out = append(out, FlowConfig{CC: "reno", ECN: true, Access: access[i%len(access)]})
	}
	for i := range nonECN {
		out = append(out, FlowConfig{CC: tenantCC, Access: access[i%len(access)]})
	}
	return out
}

// Cells lists the grid's cells in a fixed order.
func (s *Spec) Cells() []Cell {
	var out []Cell
	gig := []int64{1_000_000_000}
	ra := mbps(s.A.RateMbps)
	for _, k := range s.A.NonECN {
		out = append(out, Cell{Exp: "a", Name: fmt.Sprintf("n%d", k), X: float64(k), Flows: flows(s.A.Senders-k, k, "reno", gig), Rate: ra, Qdisc: s.red(ra)})
	}
	if s.A.ExtraRTT > 0 {
		for _, k := range s.A.NonECN {
			out = append(out, Cell{Exp: "a", Name: fmt.Sprintf("n%d.rtt%d", k, s.A.ExtraRTT.Milliseconds()), X: float64(k),
				Flows: flows(s.A.Senders-k, k, "reno", gig), Rate: ra, Qdisc: s.red(ra), RTT: s.A.ExtraRTT})
		}
	}
	rb := mbps(s.B.RateMbps)
	var acc []int64
	var an []string
	for _, a := range s.B.AccessMbps {
		acc = append(acc, mbps(a))
		an = append(an, fmt.Sprint(a))
	}
	out = append(out, Cell{Exp: "b", Name: "access" + strings.Join(an, "-"), Flows: flows(s.B.ECN, s.B.NonECN, "reno", acc), Rate: rb, Qdisc: s.red(rb)})
	rc := mbps(s.C.RateMbps)
	for _, m := range s.C.MinKB {
		q := fmt.Sprintf("red,limit=%d,min=%d,max=%d,probability=%g,avpkt=1000,bandwidth=%dbit,ecn,seed=%d", 3*m*1000, m*1000, 2*m*1000, s.C.Probability, rc, s.Seed+1)
		out = append(out, Cell{Exp: "c", Name: fmt.Sprintf("min%dkb", m), X: float64(m), Flows: flows(s.C.ECN, s.C.NonECN, "reno", gig), Rate: rc, Qdisc: q})
	}
	for _, r := range s.D.RatesMbps {
		rd := mbps(r)
		for _, a := range s.D.CC {
			out = append(out, Cell{Exp: "d", Name: fmt.Sprintf("%s.r%g", a, r), X: r, Label: a, Flows: flows(s.D.ECN, s.D.Tenants, a, gig), Rate: rd, Qdisc: s.red(rd)})
		}
	}
	return out
}

// RunConfig is the run of one cell, with or without vCC, and seed.
func (s *Spec) RunConfig(c Cell, withVCC bool, seed uint64) RunConfig {
	react, _ := vcc.ParseReact(s.React)
	rtt := s.RTT
	if c.RTT > 0 {
		rtt = c.RTT
	}
	return RunConfig{Flows: c.Flows, Bottleneck: c.Rate, RTT: rtt, Qdisc: c.Qdisc, VCC: withVCC, React: react,
		Duration: s.Duration, Warmup: s.Warmup, Seed: seed}
}

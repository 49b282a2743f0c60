// Package mptcpgrid is the `mptcp` experiment: paper 004's grid of MPTCP
// timeout-retransmission policies against receive-buffer blocking, run on
// package mptcp in the simulator. Its spec (experiments/mptcpgrid/specs/mptcp.yaml)
// has its own schema, because its cells are paths, losses and buffers
// rather than switches and flow rates (so it lives here, embedded, not
// among package experiments' specs); its summary.json has the same shape
// as the other specs' (experiments.Summary) with the keys
// mptcp.goodput_mbps.{policy}.d{D1}-{D2}.l{L2}.b{KB} and
// mptcp.blocked_share.{...}; its figures are goodput (and blocked share)
// against subflow 2's loss, one per delay pair and buffer, like the
// paper's.
package mptcpgrid

import (
	_ "embed"
	"fmt"
	"slices"

	"github.com/pseudocong/pseudocong/experiments/grid"
	"github.com/pseudocong/pseudocong/mptcp"
	"github.com/pseudocong/pseudocong/tcp"
)

// Spec is the mptcp experiment's spec file.
type Spec struct {
	grid.Base `yaml:",inline"`
	// RateMbps is each path's rate both ways.
	RateMbps float64 `yaml:"rate_mbps"`
	Queue    int     `yaml:"queue"`   // drop-tail packets per link
	Profile  string  `yaml:"profile"` // tcp timer profile of the subflows
	SACK     bool    `yaml:"sack"`
	Coupled  bool    `yaml:"coupled"` // LIA; false: uncoupled newreno
	// Delays are the (path 1, path 2) one-way delays in ms.
	Delays [][2]int `yaml:"delays"`
	// Loss1 is path 1's loss; Loss2 the values of path 2's, in percent.
	Loss1     float64  `yaml:"loss1_percent"`
	Loss2     []int    `yaml:"loss2_percent"`
	BuffersKB []int    `yaml:"buffers_kb"`
	Policies  []string `yaml:"policies"`
	// Reduced is the smaller grid `make test` runs (fields left out keep
	// the full grid's value).
	Reduced *Reduced `yaml:"reduced"`
}

// Reduced overrides part of the grid for a quick run.
type Reduced struct {
	grid.Reduced `yaml:",inline"`
	Loss2        []int `yaml:"loss2_percent"`
}

// builtin is the paper's grid, specs/mptcp.yaml.
//
//go:embed specs/mptcp.yaml
var builtin []byte

// Load returns the built-in spec for "mptcp", or reads and checks the
// spec file at path.
func Load(path string) (*Spec, error) { return grid.Load[Spec]("mptcp", builtin, path) }

// Parse reads and checks a spec (name is for errors).
func Parse(b []byte, name string) (*Spec, error) { return grid.Parse[Spec]("mptcp", b, name) }

// Check validates the spec.
func (s *Spec) Check() error {
	if err := s.Base.Check(); err != nil {
		return err
	}
	switch {
	case s.RateMbps <= 0:
		return fmt.Errorf("rate_mbps %v: want > 0", s.RateMbps)
	case s.Queue < 1:
		return fmt.Errorf("queue %d: want at least 1 packet", s.Queue)
	case len(s.Delays) == 0 || len(s.Loss2) == 0 || len(s.BuffersKB) == 0 || len(s.Policies) == 0:
		return fmt.Errorf("delays, loss2_percent, buffers_kb and policies must all be non-empty")
	case s.Loss1 < 0 || s.Loss1 >= 100:
		return fmt.Errorf("loss1_percent %v: want 0 ≤ loss < 100", s.Loss1)
	}
	if s.Profile != "" {
		if _, err := tcp.ProfileByName(s.Profile); err != nil {
			return err
		}
	}
	for _, d := range s.Delays {
		if d[0] < 0 || d[1] < 0 {
			return fmt.Errorf("delays %v: want ≥ 0 ms", d)
		}
	}
	for _, l := range s.Loss2 {
		if l < 0 || l >= 100 {
			return fmt.Errorf("loss2_percent %d: want 0 ≤ loss < 100", l)
		}
	}
	for _, b := range s.BuffersKB {
		if b < 2 {
			return fmt.Errorf("buffers_kb %d: want at least 2", b)
		}
	}
	for _, p := range s.Policies {
		if !slices.Contains(mptcp.PolicyNames(), p) {
			return fmt.Errorf("policy %q: want one of %v", p, mptcp.PolicyNames())
		}
	}
	if r := s.Reduced; r != nil {
		if err := r.Reduced.Check(&s.Base); err != nil {
			return err
		}
		for _, l := range r.Loss2 {
			if l < 0 || l >= 100 {
				return fmt.Errorf("reduced: loss2_percent %d: want 0 ≤ loss < 100", l)
			}
		}
	}
	return nil
}

// Reduce returns the spec with its Reduced overrides applied.
func (s *Spec) Reduce() *Spec {
	r := *s
	if s.Reduced == nil {
		return &r
	}
	s.Reduced.Reduced.Apply(&r.Base)
	if len(s.Reduced.Loss2) > 0 {
		r.Loss2 = s.Reduced.Loss2
	}
	r.Reduced = nil
	return &r
}

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
	"bytes"
	_ "embed"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/pseudocong/pseudocong/mptcp"
	"github.com/pseudocong/pseudocong/tcp"
)

// Spec is the mptcp experiment's spec file.
type Spec struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	KeyPrefix   string `yaml:"key_prefix"`
	Seed        uint64 `yaml:"seed"`  // first seed; cells run Seeds seeds from it
	Seeds       int    `yaml:"seeds"` // runs per cell
	// RateMbps is each path's rate both ways.
	RateMbps float64       `yaml:"rate_mbps"`
	Queue    int           `yaml:"queue"` // drop-tail packets per link
	Duration time.Duration `yaml:"duration"`
	Warmup   time.Duration `yaml:"warmup"`
	Profile  string        `yaml:"profile"` // tcp timer profile of the subflows
	SACK     bool          `yaml:"sack"`
	Coupled  bool          `yaml:"coupled"` // LIA; false: uncoupled newreno
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
	Seeds    int           `yaml:"seeds"`
	Duration time.Duration `yaml:"duration"`
	Loss2    []int         `yaml:"loss2_percent"`
}

// builtin is the paper's grid, specs/mptcp.yaml.
//
//go:embed specs/mptcp.yaml
var builtin []byte

// Load returns the built-in spec for "mptcp", or reads and checks the
// spec file at path.
func Load(path string) (*Spec, error) {
	if path == "mptcp" {
		return Parse(builtin, "builtin:mptcp")
	}
	if !strings.HasSuffix(path, ".yaml") && !strings.HasSuffix(path, ".yml") && !strings.Contains(path, "/") {
		return nil, fmt.Errorf("mptcp spec %q: want \"mptcp\" (built in) or a path to a .yaml file", path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mptcp spec: %w", err)
	}
	return Parse(b, path)
}

// Parse reads and checks a spec (name is for errors).
func Parse(b []byte, name string) (*Spec, error) {
	var s Spec
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("mptcp spec %s: %w", name, err)
	}
	if err := s.Check(); err != nil {
		return nil, fmt.Errorf("mptcp spec %s: %w", name, err)
	}
	return &s, nil
}

// Check validates the spec.
func (s *Spec) Check() error {
	switch {
	case s.Name == "":
		return fmt.Errorf("no name")
	case s.KeyPrefix == "":
		return fmt.Errorf("no key_prefix")
	case s.Seeds < 1:
		return fmt.Errorf("seeds %d: want at least 1", s.Seeds)
	case s.RateMbps <= 0:
		return fmt.Errorf("rate_mbps %v: want > 0", s.RateMbps)
	case s.Queue < 1:
		return fmt.Errorf("queue %d: want at least 1 packet", s.Queue)
	case s.Duration <= 0 || s.Warmup < 0 || s.Warmup >= s.Duration:
		return fmt.Errorf("duration %v, warmup %v: want 0 ≤ warmup < duration", s.Duration, s.Warmup)
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
		if r.Seeds < 0 || r.Duration < 0 || r.Duration > 0 && r.Duration <= s.Warmup {
			return fmt.Errorf("reduced: seeds %d, duration %v: want ≥ 0 and a duration beyond the warmup", r.Seeds, r.Duration)
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
	if s.Reduced.Seeds > 0 {
		r.Seeds = s.Reduced.Seeds
	}
	if s.Reduced.Duration > 0 {
		r.Duration = s.Reduced.Duration
	}
	if len(s.Reduced.Loss2) > 0 {
		r.Loss2 = s.Reduced.Loss2
	}
	r.Reduced = nil
	return &r
}

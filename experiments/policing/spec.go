package policing

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/pseudocong/pseudocong/experiments"
	"github.com/pseudocong/pseudocong/internal/yamldoc"
	"github.com/pseudocong/pseudocong/netsim"
)

// Spec is the policing experiment (specs/policing.yaml, built in).
type Spec struct {
	// Topology is the topology file, relative to the spec's directory.
	Topology string   `yaml:"topology"`
	CPE      string   `yaml:"cpe"`
	Client   string   `yaml:"client"`
	Servers  []string `yaml:"servers"`
	MSS      int      `yaml:"mss"`
	Duration Duration `yaml:"duration"`
	Omit     Duration `yaml:"omit"`
	Bin      Duration `yaml:"bin"`
	Seed     uint64   `yaml:"seed"`
	// HostJitter is the simulator's host timing noise: each segment a host
	// sends leaves after a uniform random extra delay in [0, host_jitter),
	// in order. A deterministic simulator sends a window as one burst,
	// round after round, which a policer cuts at its bucket: that phase
	// lock sets policed CUBIC's goodput, and sub-millisecond noise (a real
	// host's scheduler, a live switch's timers) breaks it (docs/policing.md,
	// "Host timing noise"). 0, the default: none. The live backend has its own.
	HostJitter Duration `yaml:"host_jitter"`
	Modes      []Mode   `yaml:"modes"`
	E2E        E2E      `yaml:"e2e"`

	dir string
}

// Mode is one CPE configuration.
type Mode struct {
	Name string `yaml:"name"`
	// CPEQdisc replaces the CPE's WAN-port (uploads) and LAN-port
	// (downloads) queues; empty keeps the topology's.
	CPEQdisc string `yaml:"cpe_qdisc"`
	// WANLoss is the loss of the CPE's WAN link, both ways.
	WANLoss string `yaml:"wan_loss"`
}

// E2E is §6's end-to-end check.
type E2E struct {
	Mode string `yaml:"mode"`
	// ExtraRTT is added to the WAN link (half each way) to reach the
	// paper's 60 ms.
	ExtraRTT Duration `yaml:"extra_rtt"`
	CC       string   `yaml:"cc"`
	Bytes    int      `yaml:"bytes"`
	Limit    Duration `yaml:"limit"`
}

// Duration is a time.Duration written in tc/Go syntax (20s, 100ms).
type Duration time.Duration

// UnmarshalText parses a duration.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := netsim.ParseTime(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// D is the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// LoadSpec reads and checks a spec file.
func LoadSpec(file string) (*Spec, error) {
	data := builtinSpec
	if file == "" {
		file = "builtin:policing"
	} else {
		var err error
		if data, err = os.ReadFile(file); err != nil {
			return nil, fmt.Errorf("policing: %w", err)
		}
	}
	var s Spec
	if err := yamldoc.DecodeStrict(data, &s); err != nil {
		return nil, fmt.Errorf("policing: spec %s: %w", file, err)
	}
	s.dir = filepath.Dir(file)
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("policing: spec %s: %w", file, err)
	}
	return &s, nil
}

func (s *Spec) check() error {
	switch {
	case s.Topology == "":
		return fmt.Errorf("no topology")
	case s.CPE == "" || s.Client == "" || len(s.Servers) == 0:
		return fmt.Errorf("cpe, client and servers are required")
	case s.Duration.D() <= s.Omit.D() || s.Omit < 0:
		return fmt.Errorf("duration %v must exceed omit %v ≥ 0", s.Duration.D(), s.Omit.D())
	case s.HostJitter < 0 || s.HostJitter.D() > time.Second:
		return fmt.Errorf("host_jitter %v: want 0..1s", s.HostJitter.D())
	case s.Bin <= 0:
		return fmt.Errorf("bin %v: want > 0", s.Bin.D())
	case s.MSS < 100 || s.MSS > 9000:
		return fmt.Errorf("mss %d: want 100..9000", s.MSS)
	}
	seen := map[string]bool{}
	for _, m := range s.Modes {
		if m.Name == "" || seen[m.Name] {
			return fmt.Errorf("mode %q: names must be unique and non-empty", m.Name)
		}
		seen[m.Name] = true
		if m.CPEQdisc != "" {
			if _, err := netsim.ParseQdisc(m.CPEQdisc); err != nil {
				return fmt.Errorf("mode %s: %w", m.Name, err)
			}
		}
		if m.WANLoss != "" {
			if _, err := netsim.ParseLoss(m.WANLoss); err != nil {
				return fmt.Errorf("mode %s: %w", m.Name, err)
			}
		}
	}
	if s.E2E.Mode != "" && !seen[s.E2E.Mode] {
		return fmt.Errorf("e2e mode %q is not a mode", s.E2E.Mode)
	}
	if s.E2E.Mode != "" && (s.E2E.Bytes <= 0 || s.E2E.Limit <= 0) {
		return fmt.Errorf("e2e needs bytes > 0 and limit > 0")
	}
	_, err := s.Plan()
	return err
}

// builtinSpec is specs/policing.yaml, the spec `pseudocong policing` runs
// when given no --spec. It lives here, not in experiments/specs, because
// it is this package's schema, not an experiments.Spec.
//
//go:embed specs/policing.yaml
var builtinSpec []byte

// TopologyPath is the topology file's path (for a topology given as a
// path; a built-in name is loaded by Plan).
func (s *Spec) TopologyPath() string {
	if filepath.IsAbs(s.Topology) {
		return s.Topology
	}
	return filepath.Join(s.dir, s.Topology)
}

// Plan loads the topology: a built-in one by name (experiments/topologies),
// or a file.
func (s *Spec) Plan() (*netsim.Plan, error) {
	if !yamldoc.LooksLikePath(s.Topology) {
		t, err := experiments.LoadTopology(s.Topology)
		if err != nil {
			return nil, fmt.Errorf("policing: %w", err)
		}
		return t.Compile()
	}
	return LoadTopology(s.TopologyPath())
}

// Mode returns the mode named name.
func (s *Spec) Mode(name string) (Mode, bool) {
	for _, m := range s.Modes {
		if m.Name == name {
			return m, true
		}
	}
	return Mode{}, false
}

// ModePath is the client → server path with mode applied.
func (s *Spec) ModePath(plan *netsim.Plan, server string, m Mode) (*Path, error) {
	p, err := FindPath(plan, s.Client, server)
	if err != nil {
		return nil, err
	}
	return p.ApplyMode(s.CPE, m.CPEQdisc, m.WANLoss, plan)
}

// WithExtraRTT adds extra round-trip delay to the CPE's WAN hop.
func (p *Path) WithExtraRTT(cpeWAN func(Hop) bool, extra time.Duration) *Path {
	q := *p
	q.Hops = append([]Hop(nil), p.Hops...)
	for i := range q.Hops {
		if cpeWAN(q.Hops[i]) {
			q.Hops[i].Delay += extra / 2
			return &q
		}
	}
	return &q
}

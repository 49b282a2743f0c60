package tcpexp

import (
	"embed"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/pseudocong/pseudocong/internal/yamldoc"
	"github.com/pseudocong/pseudocong/tcp"
)

//go:embed specs/*.yaml
var builtinSpecs embed.FS

// BuiltinSpecNames lists the specs of this package, sorted.
func BuiltinSpecNames() []string { return yamldoc.Names(builtinSpecs, "specs") }

// IsSpec reports whether name is one of this package's built-in specs
// (the CLI sends those here instead of to package experiments).
func IsSpec(name string) bool { return slices.Contains(BuiltinSpecNames(), name) }

// Spec is a TCP experiment spec.
type Spec struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// Profile is the switch under test, Reference the one its goodput is
	// compared with (paper 000: pica8-p3297 against ideal).
	Profile   string `yaml:"profile"`
	Reference string `yaml:"reference"`
	// Topology is the network (a built-in topology of package
	// experiments or a path); it needs links with a rate.
	Topology string `yaml:"topology"`
	Seed     uint64 `yaml:"seed"`
	// Timers are the endpoints' timer profiles (tcp.ProfileByName).
	Timers []string `yaml:"timers"`
	// CC is the congestion-control algorithm (newreno if empty).
	CC string `yaml:"cc"`
	// Duration of every bulk run, from the first flow's start.
	Duration time.Duration `yaml:"duration"`
	// TraceInterval samples every sender's state.
	TraceInterval time.Duration `yaml:"trace_interval"`
	// Link latency for links the topology gives none (experiments'
	// network.link_latency).
	LinkLatency time.Duration `yaml:"link_latency"`
	// ControllerService is t_c per Packet-In (experiments'
	// controller.service_time).
	ControllerService time.Duration `yaml:"controller_service"`
	Cells             []CellSpec    `yaml:"cells"`
	// Mitigations, if any, makes the spec a mitigations spec: each name
	// runs the probe cells and the bulk cells (mitigate.go).
	Mitigations []string `yaml:"mitigations"`
	// ProbeCells selects the paper's worst probe cells (mitigate.go)
	// run per mitigation: "full" (the paper's sizes) or "reduced".
	ProbeCells string `yaml:"probe_cells"`
	// Live tunes the live backend's runs of the spec (live.go); the sim
	// ignores it.
	Live LiveSpec `yaml:"live"`

	Source string `yaml:"-"`
}

// CellSpec is one bulk-TCP cell.
type CellSpec struct {
	// ID starts the cell's summary keys.
	ID    string `yaml:"id"`
	Title string `yaml:"title"`
	// Flows bulk flows start at StartRate flows per second.
	Flows     int     `yaml:"flows"`
	StartRate float64 `yaml:"start_rate"`
	// TCAMCapacity, if set, scales the TCAM down (both switches get it).
	TCAMCapacity int `yaml:"tcam_capacity"`
	// BaseLoad rules sit in the TCAM before the run (never hit).
	BaseLoad int `yaml:"base_load"`
	// Priority is the pattern of the flows' rule priorities.
	Priority string `yaml:"priority"`
	// Trace, if true, writes every flow's cwnd trace (CSV and PNG).
	Trace bool `yaml:"trace"`
}

// Bounds of spec values (beyond them a spec is a typo).
const (
	maxFlows    = 5000
	maxDuration = time.Hour
	maxCells    = 64
)

// LoadSpec returns a built-in spec or reads a file.
func LoadSpec(nameOrPath string) (*Spec, error) {
	var data []byte
	var err error
	source := nameOrPath
	if yamldoc.LooksLikePath(nameOrPath) {
		data, err = os.ReadFile(nameOrPath)
	} else {
		data, err = builtinSpecs.ReadFile(path.Join("specs", nameOrPath+".yaml"))
		source = "builtin:" + nameOrPath
		if err != nil {
			err = fmt.Errorf("unknown TCP spec %q (built-in: %s)", nameOrPath, strings.Join(BuiltinSpecNames(), ", "))
		}
	}
	if err != nil {
		return nil, fmt.Errorf("spec %s: %w", source, err)
	}
	var s Spec
	if err := yamldoc.DecodeStrict(data, &s); err != nil {
		return nil, fmt.Errorf("spec %s: %w", source, err)
	}
	s.Source = source
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("spec %s: %w", source, err)
	}
	return &s, nil
}

// Validate reports every invalid field.
func (s *Spec) Validate() error {
	var errs []error
	bad := func(f string, a ...any) { errs = append(errs, fmt.Errorf(f, a...)) }
	if s.Name == "" {
		bad("name: must not be empty")
	}
	if s.Profile == "" || s.Reference == "" {
		bad("profile and reference: both must name a switch profile")
	}
	if len(s.Timers) == 0 {
		bad("timers: at least one timer profile is needed (linux, berkeley)")
	}
	for _, t := range s.Timers {
		if _, err := tcp.ProfileByName(t); err != nil {
			bad("timers: %v", err)
		}
	}
	if s.Duration <= 0 || s.Duration > maxDuration {
		bad("duration %v: must be in (0, %v]", s.Duration, maxDuration)
	}
	if s.TraceInterval < 0 || s.TraceInterval > s.Duration {
		bad("trace_interval %v: must be in [0, duration]", s.TraceInterval)
	}
	if len(s.Cells) == 0 || len(s.Cells) > maxCells {
		bad("cells: 1 to %d cells are needed", maxCells)
	}
	seen := map[string]bool{}
	for i, c := range s.Cells {
		if c.ID == "" || strings.ContainsAny(c.ID, ". /\\") || seen[c.ID] {
			bad("cells[%d]: id %q: must be unique, non-empty, without dots, spaces or slashes", i, c.ID)
		}
		seen[c.ID] = true
		if c.Flows < 1 || c.Flows > maxFlows {
			bad("cells[%d] (%s): flows %d: must be in [1, %d]", i, c.ID, c.Flows, maxFlows)
		}
		if !(c.StartRate > 0) || float64(c.Flows)/c.StartRate >= s.Duration.Seconds() {
			bad("cells[%d] (%s): start_rate %g: every flow must start within the duration", i, c.ID, c.StartRate)
		}
		if c.TCAMCapacity < 0 || c.BaseLoad < 0 {
			bad("cells[%d] (%s): tcam_capacity and base_load must not be negative", i, c.ID)
		}
		if !slices.Contains([]string{"ascending", "descending", "constant"}, c.Priority) {
			bad("cells[%d] (%s): priority %q: want ascending, descending or constant", i, c.ID, c.Priority)
		}
	}
	for _, m := range s.Mitigations {
		if _, err := ParseMitigation(m); err != nil {
			bad("mitigations: %v", err)
		}
	}
	if len(s.Mitigations) > 0 && !slices.Contains([]string{"full", "reduced", "none"}, s.ProbeCells) {
		bad("probe_cells %q: want full, reduced or none", s.ProbeCells)
	}
	if s.Live.Duration < 0 || s.Live.Duration > maxDuration || s.Live.Rounds < 0 || s.Live.Rounds > maxLiveRounds {
		bad("live: duration %v must be in [0, %v], rounds %d in [0, %d]", s.Live.Duration, maxDuration, s.Live.Rounds, maxLiveRounds)
	}
	return errors.Join(errs...)
}

package experiments

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
	"github.com/pseudocong/pseudocong/netsim"
	"github.com/pseudocong/pseudocong/profile"
)

// Built-in specs ship inside the binary; specs/*.yaml are the canonical
// copies (and examples for user-written specs).
//
//go:embed specs/*.yaml
var builtinSpecs embed.FS

// Kind is what an experiment measures.
type Kind string

const (
	// KindPacketIn: one-packet new flows from NIC A to NIC B, one-way delay
	// Tt = Tr − Ts (paper §2.2–2.3: Table 1, Fig. 4–8).
	KindPacketIn Kind = "packet_in"
	// KindHandshake: SYN → SYN-ACK RTT; both directions are new flows
	// (paper §3.1: Fig. 9–18).
	KindHandshake Kind = "handshake"
	// KindData: one data segment → ACK RTT; both directions' rules sit in
	// the backing table and are swapped into the TCAM (paper §3.2, Fig. 19).
	KindData Kind = "data"
)

// Kinds lists the experiment kinds a spec may use.
var Kinds = []Kind{KindPacketIn, KindHandshake, KindData}

// rulesPerFlow is how many TCAM entries one flow of the kind adds: the
// handshake and data experiments need one rule per direction.
func (k Kind) rulesPerFlow() int {
	if k == KindPacketIn {
		return 1
	}
	return 2
}

// Priority patterns of the controller's reactive app (paper §2.3).
const (
	PriorityConstant   = "constant"
	PriorityAscending  = "ascending"
	PriorityDescending = "descending"
)

var priorityPatterns = []string{PriorityAscending, PriorityDescending, PriorityConstant}

// Spec is one experiment spec file: a named set of experiments run on one
// switch profile with one seed.
type Spec struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// Profile is a switch profile name (profile.Names) or a path to one.
	Profile string `yaml:"profile"`
	// Timers is the TCP timer profile RTTs are classified with
	// (probes.ProfileByName: berkeley, linux).
	Timers string `yaml:"timers"`
	// Seed drives flow tuples, sequence numbers and everything random.
	Seed uint64 `yaml:"seed"`
	// Topology is the network every experiment runs on unless it names
	// its own: a built-in topology (experiments/topologies), chain:K, or
	// a path to a topology file. Empty: paper000.
	Topology string `yaml:"topology"`
	// KeyPrefix, if set, starts every summary key of the spec
	// ("multihop" gives multihop.handshake.median_rtt_s...), so specs can
	// share experiment ids without sharing keys.
	KeyPrefix string `yaml:"key_prefix"`
	// Series, if its interval is set, records time series of every run
	// (docs/experiments.md "Time series").
	Series     SeriesSpec       `yaml:"series"`
	Controller ControllerSpec   `yaml:"controller"`
	Network    NetworkSpec      `yaml:"network"`
	Runs       []ExperimentSpec `yaml:"experiments"`

	// Source is "builtin:NAME" or the file path.
	Source string `yaml:"-"`
}

// ControllerSpec models the controller host in the sim backend.
type ControllerSpec struct {
	// ServiceTime is the controller's processing time per Packet-In (t_c),
	// served one at a time in arrival order. Paper §2.2: 1–2 ms per flow;
	// 25.38 ms mean for batches of 25.
	ServiceTime time.Duration `yaml:"service_time"`
}

// SeriesSpec asks for time series.
type SeriesSpec struct {
	// Interval is the sampling interval; 0 records none.
	Interval time.Duration `yaml:"interval"`
}

// maxSeriesInterval bounds series.interval: beyond it a run of minutes
// has no samples to speak of.
const maxSeriesInterval = time.Hour

// NetworkSpec models the cables between the probe hosts and the switch.
type NetworkSpec struct {
	// LinkLatency is the one-way delay of a host link.
	LinkLatency time.Duration `yaml:"link_latency"`
}

// ExperimentSpec is one experiment: a grid of base loads × rates ×
// priority patterns, one simulated run per cell.
type ExperimentSpec struct {
	// ID names the experiment; summary.json keys start with it.
	ID string `yaml:"id"`
	// Paper says which table or figure of paper 000 it reproduces.
	Paper string `yaml:"paper"`
	Title string `yaml:"title"`
	Kind  Kind   `yaml:"kind"`
	// Flows is the number of new flows (SYNs, data packets) per run.
	Flows int `yaml:"flows"`
	// Rates are send rates in packets per second.
	Rates []float64 `yaml:"rates"`
	// BaseLoads are the numbers of rules in the TCAM before the run (L).
	BaseLoads []int `yaml:"base_loads"`
	// Priorities are the controller's priority patterns.
	Priorities []string `yaml:"priorities"`
	// Topology overrides the spec's network for this experiment.
	Topology string `yaml:"topology"`
	// Chain, if set, runs the experiment on chains of K switches for each
	// K given (a grid dimension, key part "k{K}"), instead of Topology.
	Chain []int `yaml:"chain"`
	// Metrics, if set, selects the summary metrics of the experiment (of
	// its kind's: metricsByKind); empty gives the kind's defaults.
	Metrics []string `yaml:"metrics"`
}

// metricsByKind lists the summary metrics each kind offers; the first
// ones (all but the medians) are the defaults. The data kind's share
// metric is named after the timer profile (share_gt_<E1>s) and selected
// as "share".
var metricsByKind = map[Kind][]string{
	KindPacketIn:  {"max_delay_s", "mean_delay_s", "controller_mean_s", "median_delay_s"},
	KindHandshake: {"bins", "max_rtt_s", "mean_rtt_s", "median_rtt_s"},
	KindData:      {"share", "max_rtt_s", "mean_rtt_s", "median_rtt_s"},
}

// metrics returns the experiment's selected metrics.
func (e ExperimentSpec) metrics() []string {
	if len(e.Metrics) > 0 {
		return e.Metrics
	}
	all := metricsByKind[e.Kind]
	return all[:len(all)-1]
}

func (e ExperimentSpec) hasMetric(m string) bool { return slices.Contains(e.metrics(), m) }

// Bounds on every numeric spec value: beyond them a spec is a typo or a
// unit slip, not an experiment, and some values would exhaust memory or
// overflow the virtual clock rather than merely run long. Each bound is
// far beyond the paper's (docs/experiments.md lists them).
const (
	// maxFlows per experiment: the paper's largest run is 4 000 flows
	// (Fig. 5); every flow keeps its samples in memory.
	maxFlows = 100_000
	// minRate and maxRate bound a send rate in packets per second. The
	// paper sends 10 to 5 000 pps; below 0.1 pps 100 000 flows take
	// weeks of virtual time, above a million no probe host keeps up.
	minRate = 0.1
	maxRate = 1_000_000
	// maxServiceTime bounds controller.service_time (per Packet-In; paper
	// §2.2: 1-2 ms).
	maxServiceTime = time.Second
	// maxLinkLatency bounds network.link_latency (one way; paper: direct
	// cables, about 1 us).
	maxLinkLatency = 10 * time.Second
	// maxCells bounds the grid of a spec (rates × base loads × priorities
	// summed over its experiments; the paper spec has 42).
	maxCells = 10_000
	// maxSamples bounds the flows summed over every cell: each keeps a
	// delay and a delivered flag, and the CSVs a row, so 10 M is already
	// hundreds of MB of output.
	maxSamples = 10_000_000
	// maxIDLen bounds an experiment id, which names files.
	maxIDLen = 64
	// maxChain bounds a chain's length (each switch is a whole switch
	// model with its own TCAM).
	maxChain = 64
)

// BuiltinSpecNames lists the specs shipped in the binary, sorted.
func BuiltinSpecNames() []string { return yamldoc.Names(builtinSpecs, "specs") }

// SpecError is a problem with a spec the user gave: unknown name, bad YAML,
// impossible parameters. The CLI turns it into exit code 2.
type SpecError struct {
	Source string
	Err    error
}

func (e *SpecError) Error() string { return fmt.Sprintf("spec %s: %v", e.Source, e.Err) }
func (e *SpecError) Unwrap() error { return e.Err }

// LoadSpec returns a built-in spec by name, or reads the file when the
// argument looks like a path (contains a slash or ends in .yaml/.yml).
// Every error it returns is a *SpecError.
func LoadSpec(nameOrPath string) (*Spec, error) {
	if yamldoc.LooksLikePath(nameOrPath) {
		data, err := os.ReadFile(nameOrPath)
		if err != nil {
			return nil, &SpecError{nameOrPath, err}
		}
		return ParseSpec(data, nameOrPath)
	}
	data, err := builtinSpecs.ReadFile(path.Join("specs", nameOrPath+".yaml"))
	if err != nil {
		return nil, &SpecError{nameOrPath, fmt.Errorf("unknown spec %q (built-in: %s; or give a path to a .yaml file)",
			nameOrPath, strings.Join(BuiltinSpecNames(), ", "))}
	}
	return ParseSpec(data, "builtin:"+nameOrPath)
}

// ParseSpec decodes and validates one spec document. Unknown keys are
// errors, so a typo cannot silently leave a default in place.
func ParseSpec(data []byte, source string) (*Spec, error) {
	var s Spec
	if err := yamldoc.DecodeStrict(data, &s); err != nil {
		return nil, &SpecError{source, err}
	}
	s.Source = source
	if err := s.Validate(); err != nil {
		return nil, &SpecError{source, err}
	}
	return &s, nil
}

// Validate reports every invalid field, joined into one error. Table
// capacity is checked by the runner, which knows the profile.
func (s *Spec) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if strings.TrimSpace(s.Name) == "" {
		bad("name: must not be empty")
	}
	if s.Profile == "" {
		bad("profile: must name a switch profile (e.g. pica8-p3297)")
	}
	if s.Timers == "" {
		bad("timers: must name a timer profile (berkeley or linux)")
	}
	if v := s.Controller.ServiceTime; v < 0 || v > maxServiceTime {
		bad("controller.service_time %v: must be in [0s, %v] (per Packet-In; paper: 1-2ms)", v, maxServiceTime)
	}
	if v := s.Network.LinkLatency; v < 0 || v > maxLinkLatency {
		bad("network.link_latency %v: must be in [0s, %v] (one way; paper: ~1us)", v, maxLinkLatency)
	}
	if len(s.Runs) == 0 {
		bad("experiments: at least one experiment is needed")
	}
	if err := checkSeriesInterval(s.Series.Interval); err != nil {
		bad("series.interval %v: %v", s.Series.Interval, err)
	}
	if s.KeyPrefix != "" && (len(s.KeyPrefix) > maxIDLen || strings.ContainsAny(s.KeyPrefix, ". /\\")) {
		bad("key_prefix %q: must be at most %d characters without dots, spaces or slashes", s.KeyPrefix, maxIDLen)
	}
	seen := map[string]bool{}
	for i, e := range s.Runs {
		where := fmt.Sprintf("experiments[%d] (%s)", i, e.ID)
		if err := e.validate(); err != nil {
			bad("%s: %w", where, err)
		}
		if seen[e.ID] {
			bad("%s: duplicate id", where)
		}
		seen[e.ID] = true
	}
	// The grid as a whole: computed in float64 so that absurd list lengths
	// cannot overflow the product.
	var cells, samples float64
	for _, e := range s.Runs {
		n := float64(len(e.Rates)) * float64(len(e.BaseLoads)) * float64(len(e.Priorities)) * float64(max(len(e.Chain), 1))
		cells += n
		samples += n * float64(max(e.Flows, 0))
	}
	if cells > maxCells {
		bad("experiments: %.0f runs (rates × base_loads × priorities): must be at most %d (chain lengths multiply it too)", cells, maxCells)
	}
	if samples > maxSamples {
		bad("experiments: %.0f flows over all runs: must be at most %d (every sample is kept in memory)", samples, maxSamples)
	}
	return errors.Join(errs...)
}

func (e ExperimentSpec) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if e.ID == "" || len(e.ID) > maxIDLen || strings.ContainsAny(e.ID, ". /\\") {
		bad("id %q: must be 1 to %d characters without dots, spaces or slashes (it prefixes summary keys and file names)", e.ID, maxIDLen)
	}
	if !slices.Contains(Kinds, e.Kind) {
		bad("kind %q: want one of %v", e.Kind, Kinds)
	}
	if e.Flows < 1 || e.Flows > maxFlows {
		bad("flows %d: must be in [1, %d] (new flows per run; paper: at most 4000)", e.Flows, maxFlows)
	}
	if len(e.Rates) == 0 {
		bad("rates: at least one rate is needed")
	}
	for _, r := range e.Rates {
		// Written so that NaN fails too.
		if !(r >= minRate && r <= maxRate) {
			bad("rates: rate %g pps: must be in [%g, %d] (paper: 10 to 5000)", r, minRate, maxRate)
		}
	}
	if len(e.BaseLoads) == 0 {
		bad("base_loads: at least one base load is needed (0 = empty table)")
	}
	for _, l := range e.BaseLoads {
		// The upper bound also keeps base load + new rules from
		// overflowing in checkCapacity.
		if l < 0 || l > profile.MaxTCAMCapacity {
			bad("base_loads: base load %d: must be in [0, %d] (rules already in the TCAM; at most profile.MaxTCAMCapacity)", l, profile.MaxTCAMCapacity)
		}
	}
	if len(e.Priorities) == 0 {
		bad("priorities: at least one pattern is needed (%v)", priorityPatterns)
	}
	for _, p := range e.Priorities {
		if !slices.Contains(priorityPatterns, p) {
			bad("priority %q: want one of %v", p, priorityPatterns)
		}
	}
	if hasDup(e.Rates) || hasDup(e.BaseLoads) || hasDup(e.Priorities) || hasDup(e.Chain) {
		bad("chain, rates, base_loads and priorities must not repeat a value")
	}
	for _, k := range e.Chain {
		if k < 1 || k > maxChain {
			bad("chain: %d switches: must be in [1, %d]", k, maxChain)
		}
	}
	if len(e.Chain) > 0 && e.Topology != "" {
		bad("chain and topology: give one (chain runs on chain:K topologies)")
	}
	if known, ok := metricsByKind[e.Kind]; ok {
		for _, m := range e.Metrics {
			if !slices.Contains(known, m) {
				bad("metric %q: the %s kind has %v", m, e.Kind, known)
			}
		}
		if hasDup(e.Metrics) {
			bad("metrics must not repeat a value")
		}
	}
	return errors.Join(errs...)
}

// checkSeriesInterval: 0 (off) or within [netsim.MinInterval, 1h].
func checkSeriesInterval(d time.Duration) error {
	if d != 0 && (d < netsim.MinInterval || d > maxSeriesInterval) {
		return fmt.Errorf("must be 0 (off) or in [%v, %v]", netsim.MinInterval, maxSeriesInterval)
	}
	return nil
}

func hasDup[T comparable](xs []T) bool {
	seen := map[T]bool{}
	for _, x := range xs {
		if seen[x] {
			return true
		}
		seen[x] = true
	}
	return false
}

// checkCapacity rejects runs whose base load plus new rules cannot fit in a
// TCAM of the given capacity: the paper's experiments never evict, and a
// spec that would is asking for a different experiment.
func (s *Spec) checkCapacity(capacity int) error {
	var errs []error
	for _, e := range s.Runs {
		need := e.Flows * e.Kind.rulesPerFlow()
		for _, l := range e.BaseLoads {
			if l+need > capacity {
				errs = append(errs, fmt.Errorf("experiment %s: base load %d + %d new rules (%d flows × %d) exceeds the TCAM's %d entries",
					e.ID, l, need, e.Flows, e.Kind.rulesPerFlow(), capacity))
			}
		}
	}
	if len(errs) > 0 {
		return &SpecError{s.Source, errors.Join(errs...)}
	}
	return nil
}

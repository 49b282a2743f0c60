package highbdp

import (
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pseudocong/pseudocong/internal/workpool"
	"github.com/pseudocong/pseudocong/internal/yamldoc"
	"gopkg.in/yaml.v3"
)

// Spec is the high-bdp spec: the paper's scenario, the grid of
// bottlenecks × algorithms × seeds, the buffer-sensitivity sweep and the
// single-flow growth checks.
type Spec struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// Scale divides every rate and the duration (and the short flows'
	// sizes follow the rate × duration): the bandwidth-delay product per
	// flow in packets and the run length in AIMD cycles shrink by Scale,
	// the RTT stays (docs/high-bdp.md "Scaling"). 1: the paper's run.
	Scale       float64       `yaml:"scale"`
	Duration    time.Duration `yaml:"duration"`
	Bottlenecks []string      `yaml:"bottlenecks"` // "100M", "622M", "2.5G", "10G"
	Algorithms  []string      `yaml:"algorithms"`  // ns2-newreno first: the paper's
	// Modern lists the algorithms that run with SACK, timestamps and
	// F-RTO (as the stacks that ship them do); the others run as ns-2's
	// NewReno agent, without.
	Modern []string `yaml:"modern"`
	Seeds  []uint64 `yaml:"seeds"`
	// Buffer is L's DropTail limit as a fraction of its BDP in packets;
	// BufferSweep the fractions of the sensitivity cells (the first
	// algorithm, first seed, every bottleneck).
	Buffer      float64   `yaml:"buffer_bdp"`
	BufferSweep []float64 `yaml:"buffer_sweep"`
	// AccessBufferPkts is every access link's DropTail limit in
	// packets, unscaled; 0: 10 000, which never binds (ns-2's default
	// limit_ 50 is 49 in our terms: docs/high-bdp.md).
	AccessBufferPkts int `yaml:"access_buffer_pkts"`
	// Delays: access (each of the four access hops of a round trip) and
	// bottleneck, one way.
	AccessDelay     time.Duration `yaml:"access_delay"`
	BottleneckDelay time.Duration `yaml:"bottleneck_delay"`
	SsthreshBytes   int           `yaml:"initial_ssthresh_bytes"`
	InitialCwnd     uint32        `yaml:"initial_cwnd"`
	// RTORestart: Scenario.RTORestart (false or absent: RFC 6298's
	// timer, the results so far).
	RTORestart bool `yaml:"rto_restart_on_retransmit"`
	// Split: Scenario.Split for every cell ("bottleneck" or "mixed":
	// each cell on two event loops, for two free cores per worker;
	// absent: one).
	Split string `yaml:"split"`
	// SplitBottlenecks, if set, limits Split to the grid and buffer cells
	// of these bottlenecks (the others, and the growth cells, run on one
	// loop): a split pays only for a cell long enough to leave the other
	// cells behind, the 10G hour's.
	SplitBottlenecks []string `yaml:"split_bottlenecks"`
	MSS              int      `yaml:"mss"`
	Long             int      `yaml:"long_flows"`
	Short            int      `yaml:"short_flows"`
	Web              int      `yaml:"web_flows"`
	// ShortShare: each short flow moves this fraction of L's capacity ×
	// duration; ShortStart: when (fraction of the duration).
	ShortShare      []float64     `yaml:"short_share"`
	ShortStart      []float64     `yaml:"short_start"`
	LongStartSpread time.Duration `yaml:"long_start_spread"`
	WebMeanBytes    int           `yaml:"web_mean_bytes"`
	WebThink        time.Duration `yaml:"web_think"`
	// Growth runs one flow alone (no loss) at GrowthBottleneck for
	// GrowthDuration, with and without delayed ACKs, to time the window
	// from 65 535 B to GrowthTargetBytes; zero duration: skipped.
	GrowthBottleneck  string        `yaml:"growth_bottleneck"`
	GrowthDuration    time.Duration `yaml:"growth_duration"`
	GrowthTargetBytes int           `yaml:"growth_target_bytes"`
	// Sampling: the long flow's window over the run and over its first
	// FineFor; L's utilisation series.
	TraceEvery time.Duration `yaml:"trace_every"`
	FineEvery  time.Duration `yaml:"fine_every"`
	FineFor    time.Duration `yaml:"fine_for"`
	UtilEvery  time.Duration `yaml:"util_every"`
}

//go:embed high-bdp.yaml
var builtin []byte

//go:embed high-bdp-ci.yaml
var builtinCI []byte

//go:embed high-bdp-20.yaml
var builtin20 []byte

// Names of the built-in specs.
const (
	SpecName   = "high-bdp"
	SpecNameCI = "high-bdp-ci"
	SpecName20 = "high-bdp-20"
)

// IsSpec reports whether name is one of this package's built-in specs or
// a path to a high-bdp spec, so the CLI can route it here. A file is one
// if its name starts with high-bdp or its top level has this package's
// own key, bottlenecks: a copy saved under another name must not fall
// through to the generic experiment loader, whose error ("field scale not
// found") would not say what went wrong. An unreadable file is judged by
// its name, and the loader it goes to reports why it cannot be read.
func IsSpec(name string) bool {
	if name == SpecName || name == SpecNameCI || name == SpecName20 {
		return true
	}
	if !yamldoc.LooksLikePath(name) {
		return false
	}
	if strings.HasPrefix(filepath.Base(name), "high-bdp") {
		return true
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return false
	}
	var top map[string]any
	if yaml.Unmarshal(data, &top) != nil {
		return false
	}
	_, ok := top["bottlenecks"]
	return ok
}

// LoadSpec loads a built-in spec or a YAML file.
func LoadSpec(name string) (*Spec, error) {
	var data []byte
	switch name {
	case SpecName:
		data = builtin
	case SpecNameCI:
		data = builtinCI
	case SpecName20:
		data = builtin20
	default:
		var err error
		if data, err = os.ReadFile(name); err != nil {
			return nil, fmt.Errorf("high-bdp spec: %w", err)
		}
	}
	s := &Spec{}
	if err := yamldoc.DecodeStrict(data, s); err != nil {
		return nil, fmt.Errorf("high-bdp spec %s: %w", name, err)
	}
	return s, s.check()
}

// ParseRate reads "100M", "622M", "2.5G", "10G" (bit/s).
func ParseRate(s string) (int64, error) {
	mult := 1.0
	t := strings.TrimSpace(s)
	switch {
	case strings.HasSuffix(t, "G"):
		mult, t = 1e9, strings.TrimSuffix(t, "G")
	case strings.HasSuffix(t, "M"):
		mult, t = 1e6, strings.TrimSuffix(t, "M")
	case strings.HasSuffix(t, "k"):
		mult, t = 1e3, strings.TrimSuffix(t, "k")
	}
	var v float64
	if _, err := fmt.Sscanf(t, "%g", &v); err != nil || v <= 0 {
		return 0, fmt.Errorf("rate %q: want a positive number with M or G", s)
	}
	return int64(math.Round(v * mult)), nil
}

func (s *Spec) check() error {
	switch {
	case s.Scale < 1:
		return fmt.Errorf("high-bdp spec: scale %g: want >= 1", s.Scale)
	case s.Duration <= 0:
		return fmt.Errorf("high-bdp spec: duration %v: want > 0", s.Duration)
	case len(s.Bottlenecks) == 0 || len(s.Algorithms) == 0 || len(s.Seeds) == 0:
		return fmt.Errorf("high-bdp spec: bottlenecks, algorithms and seeds must each be non-empty")
	case s.Buffer <= 0:
		return fmt.Errorf("high-bdp spec: buffer_bdp %g: want > 0", s.Buffer)
	case s.AccessBufferPkts < 0:
		return fmt.Errorf("high-bdp spec: access_buffer_pkts %d: want >= 1 (0 or absent: 10 000)", s.AccessBufferPkts)
	case len(s.ShortShare) != s.Short || len(s.ShortStart) != s.Short:
		return fmt.Errorf("high-bdp spec: %d short flows need as many short_share and short_start", s.Short)
	case !knownSplit(s.Split):
		return fmt.Errorf("high-bdp spec: split %q: want %q, %q or absent", s.Split, SplitBottleneck, SplitMixed)
	case len(s.SplitBottlenecks) > 0 && s.Split == SplitNone:
		return fmt.Errorf("high-bdp spec: split_bottlenecks %v without split: say where to cut them", s.SplitBottlenecks)
	}
	for _, b := range s.SplitBottlenecks {
		if !slices.Contains(s.Bottlenecks, b) {
			return fmt.Errorf("high-bdp spec: split_bottlenecks: %q is not one of the bottlenecks %v", b, s.Bottlenecks)
		}
	}
	for _, b := range append(append([]string{}, s.Bottlenecks...), s.GrowthBottleneck) {
		if b == "" {
			continue
		}
		if _, err := ParseRate(b); err != nil {
			return fmt.Errorf("high-bdp spec: %w", err)
		}
	}
	for _, a := range s.Algorithms {
		if _, err := newAlgorithm(a, 0, nil); err != nil {
			return fmt.Errorf("high-bdp spec: %w", err)
		}
	}
	return nil
}

// Cell is one run of the grid.
type Cell struct {
	Kind       string  `json:"kind"` // "grid", "buffer", "growth"
	Bottleneck string  `json:"bottleneck"`
	CC         string  `json:"cc"`
	Seed       uint64  `json:"seed"`
	Buffer     float64 `json:"buffer_bdp"`
	DelAck     bool    `json:"delack"`
}

// Label names the cell in progress lines.
func (c Cell) Label() string {
	switch c.Kind {
	case "growth":
		return fmt.Sprintf("growth %s delack=%v", c.Bottleneck, c.DelAck)
	case "buffer":
		return fmt.Sprintf("buffer %s %s x%.2g BDP", c.Bottleneck, c.CC, c.Buffer)
	}
	return fmt.Sprintf("%s %s seed %d", c.Bottleneck, c.CC, c.Seed)
}

// Cells is the grid in a fixed order: the growth checks, the grid, the
// buffer sweep (a shard i/n takes the cells whose index is i mod n).
func (s *Spec) Cells() []Cell {
	var cs []Cell
	if s.GrowthDuration > 0 {
		cs = append(cs, Cell{Kind: "growth", Bottleneck: s.GrowthBottleneck, CC: NS2Reno, DelAck: true},
			Cell{Kind: "growth", Bottleneck: s.GrowthBottleneck, CC: NS2Reno, DelAck: false})
	}
	for _, b := range s.Bottlenecks {
		for _, a := range s.Algorithms {
			for _, seed := range s.Seeds {
				cs = append(cs, Cell{Kind: "grid", Bottleneck: b, CC: a, Seed: seed, Buffer: s.Buffer, DelAck: true})
			}
		}
	}
	for _, f := range s.BufferSweep {
		if f == s.Buffer {
			continue
		}
		for _, b := range s.Bottlenecks {
			cs = append(cs, Cell{Kind: "buffer", Bottleneck: b, CC: s.Algorithms[0], Seed: s.Seeds[0], Buffer: f, DelAck: true})
		}
	}
	return cs
}

// splitFor is the cut of cell c's scenario (Split, SplitBottlenecks).
func (s *Spec) splitFor(c Cell) string {
	if len(s.SplitBottlenecks) == 0 || c.Kind != "growth" && slices.Contains(s.SplitBottlenecks, c.Bottleneck) {
		return s.Split
	}
	return SplitNone
}

// Scenario builds the cell's run.
func (s *Spec) Scenario(c Cell) (Scenario, error) {
	bw, err := ParseRate(c.Bottleneck)
	if err != nil {
		return Scenario{}, err
	}
	sc := Scenario{
		Bottleneck: int64(float64(bw) / s.Scale), Access: int64(1e9 / s.Scale),
		AccessDelay: s.AccessDelay, BottleneckDelay: s.BottleneckDelay,
		CC: c.CC, Modern: slices.Contains(s.Modern, c.CC), MSS: s.MSS, SsthreshBytes: s.SsthreshBytes, DelAck: c.DelAck, InitialCwnd: s.InitialCwnd, RTORestart: s.RTORestart, Split: s.splitFor(c),
		Seed: c.Seed, AccessBufferPkts: s.AccessBufferPkts,
	}
	if c.Kind == "growth" {
		// One flow alone, a buffer of two BDPs: no loss, so the window
		// grows by additive increase only, at the base RTT.
		sc.Duration, sc.Long = s.GrowthDuration, 1
		sc.Access = 1e9
		sc.Bottleneck = bw
		sc.BufferPkts = int(2 * sc.BDPPkts())
		sc.FineEvery, sc.FineFor = 10*time.Millisecond, s.GrowthDuration
		return sc, nil
	}
	sc.Duration = time.Duration(float64(s.Duration) / s.Scale)
	sc.Long, sc.Short, sc.Web = s.Long, s.Short, s.Web
	sc.BufferPkts = max(int(math.Round(sc.BDPPkts()*c.Buffer)), 2)
	for i := range s.Short {
		sc.ShortBytes = append(sc.ShortBytes, int(float64(sc.Bottleneck)/8*sc.Duration.Seconds()*s.ShortShare[i]))
		sc.ShortStart = append(sc.ShortStart, s.ShortStart[i])
	}
	sc.LongStartSpread = s.LongStartSpread
	sc.WebMeanBytes, sc.WebThink = s.WebMeanBytes, s.WebThink
	if c.Kind == "grid" {
		sc.TraceEvery, sc.FineEvery, sc.FineFor, sc.UtilEvery = s.TraceEvery, s.FineEvery, s.FineFor, s.UtilEvery
		if s.Scale > 1 {
			sc.TraceEvery = time.Duration(float64(sc.TraceEvery) / s.Scale)
			sc.UtilEvery = time.Duration(float64(sc.UtilEvery) / s.Scale)
		}
	}
	return sc, nil
}

// CellResult is a finished cell.
type CellResult struct {
	Cell    Cell     `json:"cell"`
	Index   int      `json:"index"`
	Buffer  int      `json:"buffer_pkts"`
	RTTms   float64  `json:"rtt_ms"`
	BDPPkts float64  `json:"bdp_pkts"`
	Outcome *Outcome `json:"outcome"`
}

// ShardFile is what a shard writes.
const ShardFile = "highbdp-shard.json"

// GCPercent is the GOGC that `pseudocong experiment run` gives a
// simulation by default (--gc-percent), and the benchmarks here use. A
// cell's heap is mostly long-lived packet descriptors and the event
// queue, which Go's default (100) marks again at every doubling, and
// while it marks every copy of an event or a segment takes a write
// barrier: at 400 the 10G cell's first simulated minute took 9 % fewer
// instructions (cachegrind: 5 185 M against 4 720 M, the same as with
// the collector off) and its late window 7 % fewer, for up to about five
// times the live heap in memory (docs/high-bdp.md, "Speed").
const GCPercent = 400

// UseGCPercent sets the collector's target to n percent, unless n is 0
// or GOGC is set in the environment (the runtime has read it, and the
// user's explicit choice wins).
func UseGCPercent(n int) {
	if _, set := os.LookupEnv("GOGC"); set || n == 0 {
		return
	}
	debug.SetGCPercent(n)
}

// ShardDoc is one shard's results.
type ShardDoc struct {
	Spec    string       `json:"spec"`
	Shard   int          `json:"shard"`
	Count   int          `json:"count"`
	Grid    int          `json:"grid"`
	Results []CellResult `json:"results"`
}

// Progress reports a cell's simulated time as it runs and each finished
// cell: done is how many cells of the shard have finished. With Workers >
// 1 several cells report; the calls do not overlap.
type Progress func(label string, done, total int, simulated, of time.Duration, events uint64)

// RunOptions say which cells RunShard runs and how.
type RunOptions struct {
	// Shard and Count: the cells whose index i has i mod Count == Shard
	// (Count 0 or 1: all).
	Shard, Count int
	// Workers is how many cells run at once (0 or 1: one at a time).
	// The results do not depend on it: each cell is a function of its
	// scenario. With more than one, each cell runs locked to an OS
	// thread and reports that thread's CPU time (Scenario.ThreadCPU),
	// and the most expensive cells start first (expectedWork), so that the run
	// ends with the longest cell rather than a long cell started last.
	Workers  int
	Progress Progress
}

// RunShard runs the cells of o's shard. A cancelled ctx stops the running
// cells, starts no more and returns the error.
func RunShard(ctx context.Context, s *Spec, name string, o RunOptions) (*ShardDoc, error) {
	shard, n := o.Shard, max(o.Count, 1)
	if shard < 0 || shard >= n {
		return nil, fmt.Errorf("high-bdp: shard %d/%d: want 0 <= i < n", shard, n)
	}
	cells := s.Cells()
	doc := &ShardDoc{Spec: name, Shard: shard, Count: n, Grid: len(cells)}
	var mine []int
	scs := map[int]Scenario{}
	for i, c := range cells {
		if i%n != shard {
			continue
		}
		sc, err := s.Scenario(c)
		if err != nil {
			return nil, err
		}
		sc.Ctx, sc.ThreadCPU = ctx, o.Workers > 1
		mine, scs[i] = append(mine, i), sc
	}
	// Start order: the grid's, or with several workers the costliest
	// first (a stable sort: equal costs keep the grid's order).
	order := slices.Clone(mine)
	if o.Workers > 1 {
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(expectedWork(scs[b]), expectedWork(scs[a])) })
	}
	var mu sync.Mutex // serialises the progress calls and counts the finished cells
	done := 0
	report := func(label string, sim, of time.Duration, ev uint64, finished bool) {
		mu.Lock()
		defer mu.Unlock()
		if finished {
			done++
		}
		o.Progress(label, done, len(mine), sim, of, ev)
	}
	// A split cell takes a second core only while fewer cells run than
	// there are workers: while another cell runs beside it, its two
	// sides take turns on one thread (Scenario.SpareCore).
	var running atomic.Int32
	spare := func() bool { return int(running.Load()) < o.Workers }
	results, err := workpool.Map(ctx, len(order), workpool.Options{Workers: max(o.Workers, 1)}, func(k int) (CellResult, error) {
		running.Add(1)
		defer running.Add(-1)
		i := order[k]
		c, sc := cells[i], scs[i]
		if o.Workers > 1 {
			sc.SpareCore = spare
		}
		if o.Progress != nil {
			label := c.Label()
			sc.ProgressEvery = max(sc.Duration/20, time.Millisecond)
			sc.Progress = func(sim time.Duration, ev uint64) { report(label, sim, sc.Duration, ev, false) }
		}
		out, err := sc.Run()
		if err != nil {
			return CellResult{}, fmt.Errorf("high-bdp: cell %s: %w", c.Label(), err)
		}
		if o.Progress != nil {
			report(c.Label(), sc.Duration, sc.Duration, out.Events, true)
		}
		return CellResult{Cell: c, Index: i, Buffer: sc.BufferPkts,
			RTTms: float64(sc.RTT()) / 1e6, BDPPkts: sc.BDPPkts(), Outcome: out}, nil
	})
	if err != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("high-bdp: stopped before every cell finished: %w", err)
	} else if err != nil {
		return nil, err
	}
	doc.Results = results
	slices.SortFunc(doc.Results, func(a, b CellResult) int { return cmp.Compare(a.Index, b.Index) })
	return doc, nil
}

// expectedWork is a cell's cost, for the start order: its packets are
// about the bottleneck's rate times the simulated time.
func expectedWork(sc Scenario) float64 { return float64(sc.Bottleneck) * sc.Duration.Seconds() }

// WriteShard writes doc into dir.
func WriteShard(dir string, doc *ShardDoc) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ShardFile), b, 0o644)
}

// IsShardDir reports whether dir holds a high-bdp shard.
func IsShardDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, ShardFile))
	return err == nil
}

// Merge reads every shard directory and checks they are one whole run.
func Merge(dirs []string) ([]CellResult, string, error) {
	var all []CellResult
	seen := map[int]bool{}
	name, count, grid := "", 0, 0
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, ShardFile))
		if err != nil {
			return nil, "", fmt.Errorf("high-bdp merge: %w", err)
		}
		var doc ShardDoc
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, "", fmt.Errorf("high-bdp merge: %s: %w", d, err)
		}
		if name == "" {
			name, count, grid = doc.Spec, doc.Count, doc.Grid
		}
		if doc.Spec != name || doc.Count != count || doc.Grid != grid {
			return nil, "", fmt.Errorf("high-bdp merge: %s is shard %d/%d of %s (grid %d), not of %s %d-way (grid %d)", d, doc.Shard, doc.Count, doc.Spec, doc.Grid, name, count, grid)
		}
		if seen[doc.Shard] {
			return nil, "", fmt.Errorf("high-bdp merge: shard %d given twice", doc.Shard)
		}
		seen[doc.Shard] = true
		all = append(all, doc.Results...)
	}
	if len(seen) != count {
		return nil, "", fmt.Errorf("high-bdp merge: %d of %d shards", len(seen), count)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Index < all[j].Index })
	return all, name, nil
}

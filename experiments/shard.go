package experiments

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pseudocong/pseudocong/experiments/sim"
	"github.com/pseudocong/pseudocong/probes"
	"github.com/pseudocong/pseudocong/profile"
)

// A sweep too large for one machine runs as n shards: shard i runs the
// cells whose index in grid order (see grid) is i mod n, and writes their
// outcomes, with everything that identifies the run, into shard.json.
// Merge checks that a set of shard outputs is exactly one run cut into
// shards and rebuilds the Result a single run would have had, so the
// merged summary.json, CSVs, figures and report.md are those of the
// single run, byte for byte apart from wall time (docs/scale.md).
//
// Round-robin rather than contiguous ranges: neighbouring cells of an
// experiment cost about the same (the next rate or base load), so every
// shard gets a similar share of the cheap and the expensive ones.

// ShardFile is the one file a shard writes into its --out directory.
const ShardFile = "shard.json"

// shardFormat versions shard.json; Merge refuses other versions.
const shardFormat = 1

// Shard is one of Count parts of a spec's grid, Index counted from 0 (as
// a Kubernetes Indexed Job's JOB_COMPLETION_INDEX).
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// maxShards bounds --shard's n: more shards than cells only adds empty ones.
const maxShards = maxCells

// ParseShard reads "i/n" with 0 ≤ i < n.
func ParseShard(s string) (Shard, error) {
	is, ns, ok := strings.Cut(s, "/")
	if !ok {
		return Shard{}, fmt.Errorf("shard %q: want i/n, e.g. 0/4 (i counts from 0)", s)
	}
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("shard %q: want i/n with integers, e.g. 0/4", s)
	}
	sh := Shard{Index: i, Count: n}
	if err := sh.valid(); err != nil {
		return Shard{}, err
	}
	return sh, nil
}

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

func (s Shard) valid() error {
	if s.Count < 1 || s.Count > maxShards {
		return fmt.Errorf("shard %s: n must be in [1, %d]", s, maxShards)
	}
	if s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("shard %s: i must be in [0, %d] (it counts from 0)", s, s.Count-1)
	}
	return nil
}

// check reports whether the shard can run on backend.
func (s Shard) check(backend string) error {
	if err := s.valid(); err != nil {
		return err
	}
	if backend != BackendSim {
		// A live run is one testbed on one host, and its kernel runs are
		// not cells, so there is nothing to cut.
		return fmt.Errorf("shard %s: only the %s backend runs in shards (backend %s)", s, BackendSim, backend)
	}
	return nil
}

// has reports whether the cell at grid index i belongs to the shard.
func (s Shard) has(i int) bool { return i%s.Count == s.Index }

// ShardResult is a finished shard: the cells it ran and what identifies
// the run they belong to.
type ShardResult struct {
	Shard Shard
	// Run is the whole run's Result with only this shard's cells, in
	// grid order; Values is not computed.
	Run *Result
	// Indices are the grid indices of Run.Cells.
	Indices []int
	// GridSize is the number of cells of the whole run.
	GridSize int
}

// ExecuteShard runs the cells of opts.Shard. Input errors are *SpecError,
// as for Execute.
func ExecuteShard(ctx context.Context, spec *Spec, opts Options) (*ShardResult, error) {
	if opts.Shard == nil {
		return nil, errors.New("experiments: ExecuteShard without Options.Shard")
	}
	began := time.Now()
	res, _, err := prepare(spec, &opts)
	if err != nil {
		return nil, err
	}
	sr := &ShardResult{Shard: *opts.Shard, Run: res, GridSize: len(res.Cells)}
	var mine []Cell
	for i, c := range res.Cells {
		if sr.Shard.has(i) {
			mine = append(mine, c)
			sr.Indices = append(sr.Indices, i)
		}
	}
	res.Cells = mine
	if err := runCells(ctx, res, spec, opts); err != nil {
		return nil, err
	}
	res.Wall = time.Since(began)
	return sr, nil
}

// shardDoc is shard.json. Run holds everything Merge compares between
// shards and needs to rebuild the Result: the spec itself (a spec file
// need not exist where the merge runs), the profile as loaded, the seed.
type shardDoc struct {
	Format      int         `json:"format"`
	Shard       Shard       `json:"shard"`
	Run         shardRun    `json:"run"`
	WallSeconds float64     `json:"wall_seconds"`
	Cells       []shardCell `json:"cells"`
}

type shardRun struct {
	Spec     *Spec            `json:"spec"`
	Backend  string           `json:"backend"`
	Profile  *profile.Profile `json:"profile"`
	Timers   string           `json:"timers"`
	Seed     uint64           `json:"seed"`
	GridSize int              `json:"grid_size"`
}

type shardCell struct {
	Index   int          `json:"index"`
	Label   string       `json:"label"`
	Outcome *sim.Outcome `json:"outcome"`
}

// WriteShard writes sr's shard.json into dir, atomically as WriteOutputs
// writes a run (dir may be new, empty, or a previous run's or shard's
// outputs).
func WriteShard(dir string, sr *ShardResult) ([]string, error) {
	doc := shardDoc{
		Format: shardFormat,
		Shard:  sr.Shard,
		Run: shardRun{
			Spec: sr.Run.Spec, Backend: sr.Run.Backend, Profile: sr.Run.Profile,
			Timers: sr.Run.Timers.Name, Seed: sr.Run.Seed, GridSize: sr.GridSize,
		},
		WallSeconds: sr.Run.Wall.Seconds(),
		Cells:       []shardCell{},
	}
	for k, c := range sr.Run.Cells {
		doc.Cells = append(doc.Cells, shardCell{Index: sr.Indices[k], Label: c.Label(), Outcome: c.Outcome})
	}
	data, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("shard %s: %w", sr.Shard, err)
	}
	return writeDir(dir, func(tmp string) ([]string, error) {
		if err := writeFile(createOSFile, filepath.Join(tmp, ShardFile), bytes.NewReader(append(data, '\n'))); err != nil {
			return nil, fmt.Errorf("write %s: %w", ShardFile, err)
		}
		return []string{ShardFile}, nil
	})
}

// MergeError is a set of shard outputs that is not one whole run: a
// missing, duplicate or foreign shard, a directory without shard.json.
// The CLI turns it into exit code 2.
type MergeError struct{ Err error }

func (e *MergeError) Error() string { return "merge: " + e.Err.Error() }
func (e *MergeError) Unwrap() error { return e.Err }

func mergeErrorf(format string, args ...any) error {
	return &MergeError{fmt.Errorf(format, args...)}
}

// readShard reads and strictly decodes dir/shard.json.
func readShard(dir string) (*shardDoc, error) {
	data, err := os.ReadFile(filepath.Join(dir, ShardFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, mergeErrorf("%s: no %s: not the output of `experiment run --shard`", dir, ShardFile)
	}
	if err != nil {
		return nil, mergeErrorf("%s: %w", dir, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var doc shardDoc
	if err := dec.Decode(&doc); err != nil {
		return nil, mergeErrorf("%s: %s: %w", dir, ShardFile, err)
	}
	if doc.Format != shardFormat {
		return nil, mergeErrorf("%s: %s format %d, this binary reads format %d", dir, ShardFile, doc.Format, shardFormat)
	}
	if doc.Run.Spec == nil || doc.Run.Profile == nil {
		return nil, mergeErrorf("%s: %s: no spec or profile", dir, ShardFile)
	}
	if err := doc.Shard.valid(); err != nil {
		return nil, mergeErrorf("%s: %w", dir, err)
	}
	return &doc, nil
}

// Merge reads the shard outputs in dirs and returns the Result of the
// whole run, as Execute would have: same cells, outcomes and summary
// values. Its Wall is the sum of the shards' wall times (the machine time
// the sweep took). Every error about the set of shards is a *MergeError.
func Merge(dirs []string) (*Result, error) {
	if len(dirs) == 0 {
		return nil, mergeErrorf("no shard directories given")
	}
	docs := make([]*shardDoc, len(dirs))
	for i, d := range dirs {
		doc, err := readShard(d)
		if err != nil {
			return nil, err
		}
		docs[i] = doc
	}
	first, firstDir := docs[0], dirs[0]
	firstRun, err := json.Marshal(first.Run)
	if err != nil {
		return nil, err
	}
	n := first.Shard.Count
	byIndex := map[int]string{}
	for i, doc := range docs {
		if doc.Shard.Count != n {
			return nil, mergeErrorf("%s is shard %s but %s is shard %s: the shards must cut the run into the same number of parts",
				dirs[i], doc.Shard, firstDir, first.Shard)
		}
		if prev, dup := byIndex[doc.Shard.Index]; dup {
			return nil, mergeErrorf("%s and %s are both shard %s", prev, dirs[i], doc.Shard)
		}
		byIndex[doc.Shard.Index] = dirs[i]
		run, err := json.Marshal(doc.Run)
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(run, firstRun) {
			return nil, mergeErrorf("%s is not a shard of the same run as %s: %s", dirs[i], firstDir, runDifference(first.Run, doc.Run))
		}
	}
	var missing []string
	for i := range n {
		if _, ok := byIndex[i]; !ok {
			missing = append(missing, Shard{i, n}.String())
		}
	}
	if len(missing) > 0 {
		return nil, mergeErrorf("incomplete: shard %s missing (have %d of %d)", strings.Join(missing, ", "), len(byIndex), n)
	}

	spec := first.Run.Spec
	if err := spec.Validate(); err != nil {
		return nil, mergeErrorf("%s: spec: %w", firstDir, err)
	}
	prof := first.Run.Profile
	if err := prof.Validate(); err != nil {
		return nil, mergeErrorf("%s: profile: %w", firstDir, err)
	}
	timers, err := probes.ProfileByName(first.Run.Timers)
	if err != nil {
		return nil, mergeErrorf("%s: %w", firstDir, err)
	}
	res := &Result{Spec: spec, Backend: first.Run.Backend, Profile: prof, Timers: timers, Seed: first.Run.Seed, Cells: grid(spec)}
	if len(res.Cells) != first.Run.GridSize {
		return nil, mergeErrorf("%s: the spec has %d cells, the shard says %d", firstDir, len(res.Cells), first.Run.GridSize)
	}
	var wall float64
	for i, doc := range docs {
		// Exactly the shard's cells, in grid order, each once.
		var want []int
		for k := range res.Cells {
			if doc.Shard.has(k) {
				want = append(want, k)
			}
		}
		got := make([]int, len(doc.Cells))
		for k, c := range doc.Cells {
			got[k] = c.Index
		}
		if !slices.Equal(got, want) {
			return nil, mergeErrorf("%s: shard %s holds cells %v, want %v: an interrupted or edited shard", dirs[i], doc.Shard, got, want)
		}
		for _, c := range doc.Cells {
			cell := &res.Cells[c.Index]
			if c.Label != cell.Label() {
				return nil, mergeErrorf("%s: cell %d is %q, the spec's is %q", dirs[i], c.Index, c.Label, cell.Label())
			}
			if c.Outcome == nil || len(c.Outcome.Delays) != len(c.Outcome.Delivered) {
				return nil, mergeErrorf("%s: cell %d (%s): no outcome or a truncated one", dirs[i], c.Index, c.Label)
			}
			cell.Outcome = c.Outcome
		}
		wall += doc.WallSeconds
	}
	res.Values = summarize(res)
	res.Wall = time.Duration(wall * float64(time.Second))
	return res, nil
}

// runDifference names the first field in which two shards' runs differ.
func runDifference(a, b shardRun) string {
	js := func(v any) string { s, _ := json.Marshal(v); return string(s) }
	switch {
	case js(a.Spec) != js(b.Spec):
		return fmt.Sprintf("different spec (%s from %s vs %s from %s)", a.Spec.Name, a.Spec.Source, b.Spec.Name, b.Spec.Source)
	case a.Seed != b.Seed:
		return fmt.Sprintf("different seed (%d vs %d)", a.Seed, b.Seed)
	case js(a.Profile) != js(b.Profile):
		return fmt.Sprintf("different switch profile (%s from %s vs %s from %s)", a.Profile.Name, a.Profile.Source, b.Profile.Name, b.Profile.Source)
	case a.Backend != b.Backend:
		return fmt.Sprintf("different backend (%s vs %s)", a.Backend, b.Backend)
	case a.Timers != b.Timers:
		return fmt.Sprintf("different timers (%s vs %s)", a.Timers, b.Timers)
	}
	return fmt.Sprintf("different grid size (%d vs %d)", a.GridSize, b.GridSize)
}

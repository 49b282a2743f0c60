package experiments

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// shardSpec is smoke widened to a grid of 11 cells, so that 3 or 4
// shards get uneven, interleaved parts of every experiment.
func shardSpec(t *testing.T) *Spec {
	t.Helper()
	spec, err := LoadSpec("smoke")
	if err != nil {
		t.Fatal(err)
	}
	spec.Runs[0].Rates = []float64{500, 1000}
	spec.Runs[1].Rates = []float64{50, 100}
	spec.Runs[1].BaseLoads = []int{0, 500}
	spec.Runs[1].Priorities = []string{PriorityAscending, PriorityConstant}
	spec.Runs[2].BaseLoads = []int{500}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	if n := len(grid(spec)); n != 11 {
		t.Fatalf("grid has %d cells, want 11", n)
	}
	return spec
}

// runShards runs every shard of n into dir/shard-i and returns the dirs.
func runShards(t *testing.T, spec *Spec, n int, dir string, opts Options) []string {
	t.Helper()
	var dirs []string
	for i := range n {
		o := opts
		o.Shard = &Shard{Index: i, Count: n}
		sr, err := ExecuteShard(context.Background(), spec, o)
		if err != nil {
			t.Fatal(err)
		}
		d := filepath.Join(dir, "shard", strings.ReplaceAll(o.Shard.String(), "/", "-of-"))
		if _, err := WriteShard(d, sr); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	return dirs
}

// wallTime matches the only bytes a run's outputs may differ in.
var wallTime = regexp.MustCompile(`"wall_seconds": [0-9.e+-]+|runs in [0-9.]+ s of wall time`)

// readOutputs returns every file of a run's output directory, wall times
// blanked.
func readOutputs(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = wallTime.ReplaceAll(b, []byte("WALL"))
	}
	return out
}

// The merged outputs of a sharded run are the single run's, byte for
// byte apart from the wall times, however many shards (more shards than
// cells included: some are empty).
func TestMergedEqualsUnsharded(t *testing.T) {
	spec := shardSpec(t)
	dir := t.TempDir()
	single := filepath.Join(dir, "single")
	if _, err := WriteOutputs(single, execute(t, spec, Options{})); err != nil {
		t.Fatal(err)
	}
	want := readOutputs(t, single)
	if len(want) < 5 {
		t.Fatalf("the single run wrote only %v", slices.Sorted(maps.Keys(want)))
	}
	counts := []int{1, 3, 13}
	if testing.Short() { // the race phase: one split shows the pool's races as well as three
		counts = []int{3}
	}
	for _, n := range counts {
		shards := runShards(t, spec, n, filepath.Join(dir, "n"+string(rune('a'+n))), Options{Workers: 2})
		// Order of the arguments does not matter.
		slices.Reverse(shards)
		res, err := Merge(shards)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		merged := filepath.Join(dir, "merged", string(rune('a'+n)))
		if _, err := WriteOutputs(merged, res); err != nil {
			t.Fatal(err)
		}
		got := readOutputs(t, merged)
		if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want))) {
			t.Fatalf("n=%d: merged wrote %v, the single run %v", n, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
		}
		for name, w := range want {
			if !bytes.Equal(got[name], w) {
				if filepath.Ext(name) == ".png" {
					t.Errorf("n=%d: %s differs from the single run's (%d vs %d bytes)", n, name, len(got[name]), len(w))
					continue
				}
				t.Errorf("n=%d: %s differs from the single run's:\n%s\n---\n%s", n, name, firstLines(got[name]), firstLines(w))
			}
		}
		if res.Wall <= 0 {
			t.Errorf("n=%d: merged wall time %v, want the shards' sum", n, res.Wall)
		}
	}
}

func firstLines(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}

// Merge refuses any set of shards that is not exactly one run.
func TestMergeRefusesMismatchedShards(t *testing.T) {
	spec := shardSpec(t)
	dir := t.TempDir()
	shards := runShards(t, spec, 3, filepath.Join(dir, "a"), Options{})
	seed := spec.Seed + 1
	otherSeed := runShards(t, spec, 3, filepath.Join(dir, "seed"), Options{Seed: &seed})
	otherProfile := runShards(t, spec, 3, filepath.Join(dir, "profile"), Options{Profile: "ideal"})
	otherSpec := *spec
	otherSpec.Runs = slices.Clone(spec.Runs)
	otherSpec.Runs[0].Flows = 40
	otherSpecShards := runShards(t, &otherSpec, 3, filepath.Join(dir, "spec"), Options{})
	four := runShards(t, spec, 4, filepath.Join(dir, "four"), Options{})
	notShard := filepath.Join(dir, "empty")
	if err := os.Mkdir(notShard, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		dirs []string
		want string
	}{
		{"none", nil, "no shard directories"},
		{"missing shard", shards[:2], "shard 2/3 missing"},
		{"duplicate shard", []string{shards[0], shards[1], shards[1]}, "are both shard 1/3"},
		{"different seed", []string{shards[0], shards[1], otherSeed[2]}, "different seed (1 vs 2)"},
		{"different profile", []string{shards[0], otherProfile[1], shards[2]}, "different switch profile"},
		{"different spec", []string{otherSpecShards[0], shards[1], shards[2]}, "different spec"},
		{"different count", []string{shards[0], shards[1], four[2]}, "same number of parts"},
		{"not a shard", []string{shards[0], notShard}, "no shard.json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Merge(c.dirs)
			var me *MergeError
			if !errors.As(err, &me) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Merge: err = %v, want a *MergeError containing %q", err, c.want)
			}
		})
	}

	// A shard file that lost a cell (edited, or cut short) is refused too.
	doc, err := readShard(shards[0])
	if err != nil {
		t.Fatal(err)
	}
	doc.Cells = doc.Cells[:len(doc.Cells)-1]
	cut, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	edited := filepath.Join(dir, "edited")
	if err := os.Mkdir(edited, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(edited, ShardFile), cut, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Merge([]string{edited, shards[1], shards[2]}); err == nil || !strings.Contains(err.Error(), "holds cells [0 3 6], want [0 3 6 9]") {
		t.Errorf("Merge with a cell missing: err = %v", err)
	}
}

func TestParseShard(t *testing.T) {
	for in, want := range map[string]Shard{"0/1": {0, 1}, "3/4": {3, 4}} {
		if got, err := ParseShard(in); err != nil || got != want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "1", "4/4", "-1/4", "0/0", "a/b", "1/2/3", "0/100000"} {
		if _, err := ParseShard(in); err == nil {
			t.Errorf("ParseShard(%q): no error", in)
		}
	}
	spec := shardSpec(t)
	err := CheckInputs(spec, Options{Backend: BackendLive, Shard: &Shard{0, 2}})
	var se *SpecError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "only the sim backend") {
		t.Errorf("a live sharded run: err = %v, want a *SpecError", err)
	}
}

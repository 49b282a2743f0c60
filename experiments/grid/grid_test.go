package grid

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testSpec is a grid spec in the shape mptcpgrid's and vccgrid's have.
type testSpec struct {
	Base    `yaml:",inline"`
	Rate    float64 `yaml:"rate"`
	Reduced *struct {
		Reduced `yaml:",inline"`
		Rates   []float64 `yaml:"rates"`
	} `yaml:"reduced"`
}

func (s *testSpec) Check() error {
	if err := s.Base.Check(); err != nil {
		return err
	}
	if s.Rate <= 0 {
		return errors.New("rate: want > 0")
	}
	if s.Reduced != nil {
		return s.Reduced.Reduced.Check(&s.Base)
	}
	return nil
}

const good = `name: t
key_prefix: t
seed: 5
seeds: 3
duration: 10s
warmup: 2s
rate: 1
reduced: {seeds: 1, duration: 4s, rates: [2]}
`

func TestLoadParseAndReduce(t *testing.T) {
	s, err := Load[testSpec]("t", []byte(good), "t")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "t" || s.Seed != 5 || s.Seeds != 3 || s.Duration != 10*time.Second || s.Reduced == nil || s.Reduced.Seeds != 1 || len(s.Reduced.Rates) != 1 {
		t.Fatalf("parsed %+v (reduced %+v)", s, s.Reduced)
	}
	b := s.Base
	s.Reduced.Apply(&b)
	if b.Seeds != 1 || b.Duration != 4*time.Second || b.Warmup != 2*time.Second || b.Seed != 5 {
		t.Fatalf("reduced %+v", b)
	}
	var none Reduced
	none.Apply(&b)
	if b.Seeds != 1 || b.Duration != 4*time.Second {
		t.Fatalf("empty overrides changed %+v", b)
	}
	file := filepath.Join(t.TempDir(), "my.yaml")
	if err := os.WriteFile(file, []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	if f, err := Load[testSpec]("t", nil, file); err != nil || f.Name != "t" {
		t.Fatalf("from a file: %v, %v", f, err)
	}
}

// Bad input names the grid, the source and the problem.
func TestLoadErrors(t *testing.T) {
	for _, c := range []struct{ arg, body, want string }{
		{"nope", "", `t spec "nope": want "t" (built in) or a path to a .yaml file`},
		{"missing.yaml", "", "t spec: open missing.yaml"},
		{"", "seeds: 0", "t spec bad.yaml: seeds 0: want at least 1"},
		{"", "name: \"\"", "t spec bad.yaml: no name"},
		{"", "key_prefix: \"\"", "no key_prefix"},
		{"", "warmup: 10s", "duration 10s, warmup 10s: want 0 ≤ warmup < duration"},
		{"", "rate: 0", "rate: want > 0"},
		{"", "bogus: 1", "field bogus not found"},
		{"", "reduced: {duration: 2s}", "reduced: seeds 0, duration 2s: want ≥ 0 and a duration beyond the warmup"},
		{"", "reduced: {seeds: -1}", "reduced: seeds -1"},
		{"", "---\nname: x", "more than one YAML document"},
	} {
		arg := c.arg
		if arg == "" {
			arg = filepath.Join(t.TempDir(), "bad.yaml")
			body := good
			key, _, _ := strings.Cut(c.body, ":")
			if i := strings.Index(good, key+":"); i >= 0 && !strings.HasPrefix(c.body, "---") {
				end := i + strings.Index(good[i:], "\n")
				body = good[:i] + c.body + good[end:]
			} else {
				body = good + c.body + "\n"
			}
			if err := os.WriteFile(arg, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := Load[testSpec]("t", []byte(good), arg)
		msg := ""
		if err != nil {
			msg = strings.ReplaceAll(err.Error(), filepath.Dir(arg)+"/", "")
		}
		if !strings.Contains(msg, c.want) {
			t.Errorf("%s %q: error %q, want %q", c.arg, c.body, msg, c.want)
		}
	}
}

// Jobs go cell by cell, then seed, then side, and Run hands the results
// back in that order whatever the workers.
func TestJobsOrder(t *testing.T) {
	j := Jobs{Cells: 3, Seeds: 2, Sides: 2}
	if j.Len() != 12 {
		t.Fatalf("len %d", j.Len())
	}
	var want [][3]int
	for c := range 3 {
		for s := range 2 {
			for d := range 2 {
				want = append(want, [3]int{c, s, d})
			}
		}
	}
	for _, w := range []int{1, 4} {
		got, err := Run(context.Background(), j, w, func(c, s, d int) ([3]int, error) { return [3]int{c, s, d}, nil })
		if err != nil {
			t.Fatal(err)
		}
		for k := range want {
			if got[k] != want[k] {
				t.Fatalf("workers %d: job %d is %v, want %v", w, k, got[k], want[k])
			}
		}
	}
	if n := (Jobs{Cells: 2, Seeds: 3}).Len(); n != 6 {
		t.Fatalf("no sides: %d jobs", n)
	}
	if c, s, d := (Jobs{Cells: 2, Seeds: 3}).At(4); c != 1 || s != 1 || d != 0 {
		t.Fatalf("no sides: job 4 is %d %d %d", c, s, d)
	}
}

// The summary rounds values to 1e-9 and carries the spec's identity; the
// output directory holds it, cells.csv and what Figures writes.
func TestOutput(t *testing.T) {
	b := &Base{Name: "t", Seed: 9}
	sum := Summary(b, "linux", 1234567*time.Microsecond, map[string]float64{"t.x": 1.0 / 3, "t.y": 2})
	if sum.WallSeconds != 1.234 || sum.Results["t.x"] != 0.333333333 || sum.Results["t.y"] != 2.0 || sum.Spec != "t" || sum.Backend != "sim" || sum.Profile != "linux" || sum.Seed != 9 {
		t.Fatalf("summary %+v", sum)
	}
	dir := filepath.Join(t.TempDir(), "out")
	o := &Output{What: "t grid", Summary: sum, CSV: [][]string{{"a", "b"}, {"1", "x,y"}}, Figures: func(d string) error {
		return os.WriteFile(filepath.Join(d, "fig.png"), nil, 0o644)
	}}
	if err := o.Write(dir); err != nil {
		t.Fatal(err)
	}
	csv, err := os.ReadFile(filepath.Join(dir, "cells.csv"))
	if err != nil || string(csv) != "a,b\n1,\"x,y\"\n" {
		t.Fatalf("cells.csv %q, %v", csv, err)
	}
	js, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Spec    string             `json:"spec"`
		Results map[string]float64 `json:"results"`
	}
	if err := json.Unmarshal(js, &back); err != nil || back.Spec != "t" || back.Results["t.x"] != 0.333333333 {
		t.Fatalf("summary.json %s: %v", js, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "fig.png")); err != nil {
		t.Fatal(err)
	}
	bad := &Output{What: "t grid", Summary: sum}
	file := filepath.Join(dir, "cells.csv")
	if err := bad.Write(file); err == nil || !strings.HasPrefix(err.Error(), "t grid: ") {
		t.Fatalf("writing into a file: %v", err)
	}
}

package experiments

import (
	"context"
	"testing"
)

// paperSubset is the built-in paper spec restricted to some experiments,
// each optionally narrowed (e.g. to fewer rates), so tests can check
// figures without running the whole spec.
func paperSubset(t testing.TB, keep map[string]func(*ExperimentSpec)) *Spec {
	t.Helper()
	spec, err := LoadSpec("paper")
	if err != nil {
		t.Fatal(err)
	}
	var runs []ExperimentSpec
	for _, e := range spec.Runs {
		narrow, ok := keep[e.ID]
		if !ok {
			continue
		}
		if narrow != nil {
			narrow(&e)
		}
		runs = append(runs, e)
	}
	spec.Runs = runs
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	return spec
}

func execute(t testing.TB, spec *Spec, opts Options) *Result {
	t.Helper()
	res, err := Execute(context.Background(), spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// value returns a summary value that must exist.
func value(t testing.TB, r *Result, key string) []float64 {
	t.Helper()
	v, ok := r.Values[key]
	if !ok {
		t.Fatalf("summary has no key %s", key)
	}
	return v
}

package experiments

import (
	"bytes"
	"testing"
)

func summaryBytes(t *testing.T, r *Result) []byte {
	t.Helper()
	s := r.Summary()
	s.WallSeconds = 0
	b, err := MarshalSummary(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The same seed gives a byte-identical summary.json apart from
// wall_seconds, whatever the number of parallel workers.
func TestSameSeedSameSummary(t *testing.T) {
	spec, err := LoadSpec("smoke")
	if err != nil {
		t.Fatal(err)
	}
	a := summaryBytes(t, execute(t, spec, Options{Workers: 1}))
	b := summaryBytes(t, execute(t, spec, Options{Workers: 3}))
	if !bytes.Equal(a, b) {
		t.Fatalf("two runs with seed %d differ:\n%s\n---\n%s", spec.Seed, a, b)
	}
	if !bytes.Contains(a, []byte(`"wall_seconds": 0`)) {
		t.Errorf("summary lacks wall_seconds:\n%s", a)
	}
}

// The seed only picks the flows' identities (source ports, sequence
// numbers); nothing in the switch model depends on them, so another seed
// gives the same results. A result that changed with the seed would mean
// hidden randomness (e.g. map order) in the model.
func TestSeedOnlyChangesFlowIdentities(t *testing.T) {
	spec, err := LoadSpec("smoke")
	if err != nil {
		t.Fatal(err)
	}
	other := spec.Seed + 41
	a := execute(t, spec, Options{})
	b := execute(t, spec, Options{Seed: &other})
	if b.Seed != other {
		t.Fatalf("seed %d not applied (%d)", other, b.Seed)
	}
	ra, _ := MarshalSummary(Summary{Results: a.Summary().Results})
	rb, _ := MarshalSummary(Summary{Results: b.Summary().Results})
	if !bytes.Equal(ra, rb) {
		t.Errorf("results depend on the seed:\n%s\n---\n%s", ra, rb)
	}
}

// summary.json has the top-level fields of the contract in order, and
// "paper" holds every number the paper states.
func TestSummaryContract(t *testing.T) {
	spec, err := LoadSpec("smoke")
	if err != nil {
		t.Fatal(err)
	}
	b := summaryBytes(t, execute(t, spec, Options{}))
	last := -1
	for _, field := range []string{`"spec"`, `"backend"`, `"profile"`, `"seed"`, `"wall_seconds"`, `"results"`, `"paper"`} {
		i := bytes.Index(b, []byte(field))
		if i < 0 || i < last {
			t.Fatalf("field %s missing or out of order in\n%s", field, b)
		}
		last = i
	}
	for k := range PaperNumbers() {
		if !bytes.Contains(b[last:], []byte(`"`+k+`"`)) {
			t.Errorf("paper value %s missing", k)
		}
	}
}

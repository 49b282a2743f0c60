package experiments

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBuiltinSpecsLoad(t *testing.T) {
	names := BuiltinSpecNames()
	for _, want := range []string{"paper", "smoke"} {
		found := false
		for _, n := range names {
			found = found || n == want
		}
		if !found {
			t.Fatalf("built-in specs %v lack %q", names, want)
		}
	}
	for _, n := range names {
		s, err := LoadSpec(n)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if s.Name != n || s.Source != "builtin:"+n {
			t.Errorf("%s: name %q source %q", n, s.Name, s.Source)
		}
	}
}

// The paper spec covers every experiment the issue lists, with the
// paper's parameters.
func TestPaperSpecCoversThePaper(t *testing.T) {
	s, err := LoadSpec("paper")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		kind  Kind
		flows int
		rates int
		loads []int
	}{
		"table1":    {KindPacketIn, 400, 4, []int{0}},
		"fig5":      {KindPacketIn, 4000, 1, []int{0}},
		"fig6_8":    {KindPacketIn, 100, 1, nil},
		"handshake": {KindHandshake, 250, 4, []int{500, 2000, 3500}},
		"data":      {KindData, 250, 4, []int{2500, 3500}},
	}
	for _, e := range s.Runs {
		w, ok := want[e.ID]
		if !ok {
			t.Errorf("unexpected experiment %s", e.ID)
			continue
		}
		delete(want, e.ID)
		if e.Kind != w.kind || e.Flows != w.flows || len(e.Rates) != w.rates {
			t.Errorf("%s: kind %s flows %d rates %v", e.ID, e.Kind, e.Flows, e.Rates)
		}
		if w.loads != nil && !equalInts(e.BaseLoads, w.loads) {
			t.Errorf("%s: base loads %v, want %v", e.ID, e.BaseLoads, w.loads)
		}
	}
	for id := range want {
		t.Errorf("experiment %s missing", id)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSpecErrors(t *testing.T) {
	valid, err := builtinSpecs.ReadFile("specs/smoke.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	edit := func(old, new string) string {
		if !strings.Contains(string(valid), old) {
			t.Fatalf("fixture: %q not in smoke.yaml", old)
		}
		return strings.Replace(string(valid), old, new, 1)
	}
	for _, tc := range []struct {
		name, arg, want string
	}{
		{"unknown name lists the built-ins", "papper", "paper, smoke"},
		{"missing file", filepath.Join(dir, "none.yaml"), "no such file"},
		{"bad yaml", write("bad.yaml", "name: [unclosed\n"), "yaml"},
		{"unknown key", write("key.yaml", edit("flows: 50", "flowz: 50")), "flowz"},
		{"empty", write("empty.yaml", ""), "empty document"},
		{"two documents", write("two.yaml", string(valid)+"\n---\nname: x\n"), "more than one"},
		{"zero flows", write("flows.yaml", edit("flows: 50", "flows: 0")), "flows 0"},
		{"negative rate", write("rate.yaml", edit("rates: [1000]", "rates: [-5]")), "rate -5"},
		{"no rates", write("norate.yaml", edit("rates: [1000]", "rates: []")), "at least one rate"},
		{"negative base load", write("load.yaml", edit("base_loads: [0]", "base_loads: [-1]")), "base load -1"},
		{"unknown kind", write("kind.yaml", edit("kind: packet_in", "kind: udp")), `kind "udp"`},
		{"unknown priority", write("prio.yaml", edit("priorities: [constant]", "priorities: [random]")), `priority "random"`},
		{"duplicate id", write("dup.yaml", edit("id: handshake", "id: table1")), "duplicate id"},
		{"bad duration", write("dur.yaml", edit("service_time: 1.95ms", "service_time: soon")), "soon"},
		{"negative service time", write("neg.yaml", edit("service_time: 1.95ms", "service_time: -1ms")), "service_time"},
		{"dotted id", write("dot.yaml", edit("id: table1", "id: table.1")), "without dots"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadSpec(tc.arg)
			var se *SpecError
			if !errors.As(err, &se) {
				t.Fatalf("LoadSpec(%q) = %v, want a *SpecError", tc.arg, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("LoadSpec(%q) error %q, want it to contain %q", tc.arg, err, tc.want)
			}
		})
	}
}

// Parameters that load but cannot run on the chosen switch are input
// errors too: Execute reports them as *SpecError before simulating.
func TestExecuteInputErrors(t *testing.T) {
	spec, err := LoadSpec("smoke")
	if err != nil {
		t.Fatal(err)
	}
	full := *spec
	full.Runs = append([]ExperimentSpec(nil), spec.Runs...)
	full.Runs[1].BaseLoads = []int{3990} // + 2 × 20 rules > 4 000
	for _, tc := range []struct {
		name string
		spec *Spec
		opts Options
		want string
	}{
		{"table overflow", &full, Options{}, "exceeds the TCAM's 4000 entries"},
		{"unknown backend", spec, Options{Backend: "hardware"}, `backend "hardware"`},
		{"unknown profile", spec, Options{Profile: "pica9"}, "unknown profile"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Execute(context.Background(), tc.spec, tc.opts)
			var se *SpecError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Execute = %v, want a *SpecError containing %q", err, tc.want)
			}
		})
	}
}

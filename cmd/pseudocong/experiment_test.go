package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runExperimentCmd(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := newExperimentCommand()
	var out, errb bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetArgs(args)
	cmd.SetContext(context.Background())
	err = cmd.Execute()
	return out.String(), errb.String(), err
}

func TestExperimentUsageErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: x\nflows: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	impossible := filepath.Join(dir, "impossible.yaml")
	spec := `name: impossible
profile: pica8-p3297
timers: berkeley
experiments:
  - id: big
    kind: handshake
    flows: 250
    rates: [10]
    base_loads: [3800]
    priorities: [ascending]
`
	if err := os.WriteFile(impossible, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown spec", []string{"run", "no-such-spec", "--out", dir}, "unknown spec"},
		{"bad yaml", []string{"run", bad, "--out", dir}, "yaml"},
		{"impossible parameters", []string{"run", impossible, "--out", dir}, "exceeds the TCAM"},
		{"no spec", []string{"run", "--out", dir}, "one SPEC"},
		{"unknown backend", []string{"run", "smoke", "--backend", "hardware", "--out", dir}, "backend"},
		{"unknown profile", []string{"run", "smoke", "--profile", "pica9", "--out", dir}, "unknown profile"},
		{"negative workers", []string{"run", "smoke", "--workers", "-1", "--out", dir}, "--workers"},
		{"negative gc percent", []string{"run", "smoke", "--gc-percent", "-1", "--out", dir}, "--gc-percent"},
		{"empty out", []string{"run", "smoke", "--out", ""}, "--out"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := runExperimentCmd(t, c.args...)
			var ue usageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want a usage error containing %q, got %v", c.want, err)
			}
		})
	}
}

// The process exits with status 2 on bad input and 0 on success: checked
// on the real main() by re-running this test binary as the command.
func TestExperimentExitCodes(t *testing.T) {
	actAsMain()
	out := t.TempDir()
	for _, c := range []struct {
		args string
		code int
	}{
		{"experiment run no-such-spec --out " + out, 2},
		{"experiment run smoke --workers -3 --out " + out, 2},
		{"experiment run smoke --quiet --out " + out, 0},
	} {
		code, stderr := runMain(t, "TestExperimentExitCodes", c.args)
		if code != c.code {
			t.Errorf("%q: exit code %d, want %d; stderr:\n%s", c.args, code, c.code, stderr)
		}
	}
	for _, f := range []string{"summary.json", "report.md", "table1.csv", "handshake.csv", "data.csv", "table1.png"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("smoke run did not write %s: %v", f, err)
		}
	}
}

func TestExperimentRunPrintsTableAndFiles(t *testing.T) {
	dir := t.TempDir()
	stdout, stderr, err := runExperimentCmd(t, "run", "smoke", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| key | paper | ours | within tolerance? |", "table1.max_delay_s.1000pps", dir, "summary.json"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	// Not a terminal: one plain progress line per run.
	if n := strings.Count(stderr, "\n["); n < 2 || strings.Contains(stderr, "\r") {
		t.Errorf("progress on a non-terminal should be plain lines, got:\n%q", stderr)
	}
}

func TestExperimentList(t *testing.T) {
	stdout, _, err := runExperimentCmd(t, "list")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"paper:", "smoke:", "handshake", "Fig. 19"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("list lacks %q:\n%s", want, stdout)
		}
	}
}

package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Bad input exits 2 with a message naming the key, from every command that
// loads a profile or spec, on the real main() (this test binary re-run as
// the command). Before the bounds, batch_size 1e15 panicked in makeslice
// (Go's panic exit status is 2 too, hence the check of stderr) and
// tcam.capacity 1e10 failed every run: exit 1.
func TestInputErrorsExitTwo(t *testing.T) {
	actAsMain()
	src, err := os.ReadFile(filepath.Join("..", "..", "profile", "builtin", "pica8-p3297.yaml"))
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
	profileWith := func(name, old, new string) string {
		if !strings.Contains(string(src), old) {
			t.Fatalf("fixture: %q not in pica8-p3297.yaml", old)
		}
		return write(name, strings.Replace(string(src), old, new, 1))
	}
	batch := profileWith("batch.yaml", "batch_size: 25", "batch_size: 1e15")
	capacity := profileWith("capacity.yaml", "capacity: 4000", "capacity: 1e10")
	typo := profileWith("typo.yaml", "batch_size: 25", "batch_sise: 25")
	badYAML := write("bad.yaml", "agent: [\n")
	flows := write("flows.yaml", `name: big
profile: pica8-p3297
timers: berkeley
experiments:
  - id: big
    kind: packet_in
    flows: 1e15
    rates: [10]
    base_loads: [0]
    priorities: [constant]
`)
	foreign := filepath.Join(dir, "home")
	if err := os.MkdirAll(foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	write("home/notes.txt", "mine")
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		args, want string
	}{
		{"experiment run smoke --quiet --profile " + batch + " --out " + out, "agent.batch_size 1000000000000000: must be in [1, 65536]"},
		{"experiment run smoke --quiet --profile " + capacity + " --out " + out, "tcam.capacity 10000000000: must be in [1, 1048576]"},
		{"experiment run smoke --quiet --profile " + typo + " --out " + out, "batch_sise"},
		{"experiment run smoke --quiet --profile " + badYAML + " --out " + out, "yaml"},
		{"experiment run " + flows + " --quiet --out " + out, "flows 1000000000000000: must be in [1, 100000]"},
		{"experiment run smoke --quiet --out " + filepath.Join(dir, "bad.yaml"), "not a directory"},
		{"experiment run smoke --quiet --out " + foreign, "holds notes.txt"},
		{"switch --profile " + batch + " --listen ptcp:0:127.0.0.1", "agent.batch_size 1000000000000000"},
		{"switch --profile " + capacity + " --listen ptcp:0:127.0.0.1", "tcam.capacity 10000000000"},
		{"switch --profile " + badYAML + " --listen ptcp:0:127.0.0.1", "yaml"},
	} {
		code, msg := runMain(t, "TestInputErrorsExitTwo", c.args)
		if code != exitUsage || !strings.Contains(msg, c.want) || strings.Contains(msg, "panic") || strings.Contains(msg, "goroutine") {
			t.Errorf("%q: exit code %d, want %d with %q; stderr:\n%s", c.args, code, exitUsage, c.want, msg)
		}
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused run created --out: %v", err)
	}
	if _, err := os.Stat(filepath.Join(foreign, "notes.txt")); err != nil {
		t.Errorf("the refused --out lost its file: %v", err)
	}
}

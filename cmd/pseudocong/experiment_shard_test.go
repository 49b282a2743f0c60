package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A sharded run through the real main(): two shards, merged, give the
// unsharded summary.json (wall time aside); a set of shards that is not
// one whole run, and a bad --shard, exit 2 without writing --out.
func TestExperimentShardAndMerge(t *testing.T) {
	actAsMain()
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	for _, args := range []string{
		"experiment run smoke --quiet --out " + p("single"),
		"experiment run smoke --quiet --shard 0/2 --out " + p("s0"),
		"experiment run smoke --quiet --shard 1/2 --out " + p("s1"),
		"experiment run smoke --quiet --shard 1/2 --seed 7 --out " + p("s1seed7"),
		"experiment merge --out " + p("merged") + " " + p("s1") + " " + p("s0"),
	} {
		if code, msg := runMain(t, "TestExperimentShardAndMerge", args); code != 0 {
			t.Fatalf("%q: exit code %d; stderr:\n%s", args, code, msg)
		}
	}
	wall := regexp.MustCompile(`"wall_seconds": [0-9.e+-]+`)
	read := func(d string) []byte {
		b, err := os.ReadFile(filepath.Join(d, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		return wall.ReplaceAll(b, nil)
	}
	if a, b := read(p("single")), read(p("merged")); !bytes.Equal(a, b) {
		t.Errorf("merged summary.json differs from the single run's:\n%s\n---\n%s", b, a)
	}

	for _, c := range []struct{ args, want string }{
		{"experiment merge --out " + p("bad") + " " + p("s0"), "shard 1/2 missing"},
		{"experiment merge --out " + p("bad") + " " + p("s0") + " " + p("s0"), "are both shard 0/2"},
		{"experiment merge --out " + p("bad") + " " + p("s0") + " " + p("s1seed7"), "different seed (1 vs 7)"},
		{"experiment merge --out " + p("bad") + " " + p("s0") + " " + p("single"), "no shard.json"},
		{"experiment merge --out " + p("s0") + " " + p("s0") + " " + p("s1"), "is one of the shard directories"},
		{"experiment merge --out " + p("bad"), "takes the shard directories"},
		{"experiment run smoke --quiet --shard 2/2 --out " + p("bad"), "i must be in [0, 1]"},
		{"experiment run smoke --quiet --shard 1 --out " + p("bad"), "want i/n"},
		{"experiment run smoke --quiet --backend live --shard 0/2 --out " + p("bad"), "only the sim backend"},
	} {
		code, msg := runMain(t, "TestExperimentShardAndMerge", c.args)
		if code != exitUsage || !strings.Contains(msg, c.want) {
			t.Errorf("%q: exit code %d, want %d with %q; stderr:\n%s", c.args, code, exitUsage, c.want, msg)
		}
	}
	if _, err := os.Stat(p("bad")); !os.IsNotExist(err) {
		t.Errorf("a refused command created --out: %v", err)
	}
}

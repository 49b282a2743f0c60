package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// unitLines returns the Key=value lines of a systemd unit, by key.
func unitLines(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '[' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Errorf("%s: malformed line %q", path, line)
			continue
		}
		out[k] = append(out[k], v)
	}
	return out
}

// envAssignments splits an Environment= value: NAME=value pairs separated
// by spaces, a pair optionally in double quotes.
func envAssignments(v string) []string {
	var out []string
	for v = strings.TrimSpace(v); v != ""; v = strings.TrimSpace(v) {
		if v[0] == '"' {
			end := strings.IndexByte(v[1:], '"')
			if end < 0 {
				return append(out, v[1:])
			}
			out = append(out, v[1:end+1])
			v = v[end+2:]
			continue
		}
		field, rest, _ := strings.Cut(v, " ")
		out = append(out, field)
		v = rest
	}
	return out
}

// Every command line of the systemd units must parse with the real CLI,
// and every PSEUDOCONG_* variable they set must name a flag of the command
// ExecStart runs: a renamed flag breaks the test instead of the daemon.
func TestSystemdUnitsMatchCLI(t *testing.T) {
	units, err := filepath.Glob("../../deploy/systemd/*.service")
	if err != nil || len(units) < 3 {
		t.Fatalf("units: %v %v", units, err)
	}
	for _, u := range units {
		t.Run(filepath.Base(u), func(t *testing.T) {
			lines := unitLines(t, u)
			var envNames []string
			for _, e := range lines["Environment"] {
				for _, a := range envAssignments(e) {
					name, _, ok := strings.Cut(a, "=")
					if !ok || !strings.HasPrefix(name, "PSEUDOCONG_") {
						t.Errorf("Environment %q: want PSEUDOCONG_<FLAG>=value", a)
						continue
					}
					envNames = append(envNames, name)
				}
			}
			execs := append(lines["ExecStart"], lines["ExecStop"]...)
			if len(lines["ExecStart"]) != 1 {
				t.Fatalf("want one ExecStart, have %q", lines["ExecStart"])
			}
			for _, line := range execs {
				fields := strings.Fields(line)
				if fields[0] != "/usr/local/bin/pseudocong" {
					t.Errorf("%q: binary should be /usr/local/bin/pseudocong", line)
					continue
				}
				cmd, rest, err := newRootCommand().Find(fields[1:])
				if err != nil || !cmd.Runnable() {
					t.Errorf("%q: no such command: %v", line, err)
					continue
				}
				if err := cmd.ParseFlags(rest); err != nil {
					t.Errorf("%q: %v", line, err)
				}
				if line != lines["ExecStart"][0] {
					continue // variables configure the ExecStart command
				}
				for _, env := range envNames {
					flag := strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(env, "PSEUDOCONG_")), "_", "-")
					if cmd.Flags().Lookup(flag) == nil {
						t.Errorf("%s sets %s but `%s` has no --%s", filepath.Base(u), env, cmd.CommandPath(), flag)
					}
				}
			}
		})
	}
}

func TestEnvAssignments(t *testing.T) {
	got := envAssignments(`A=1 "B=x y" C=3`)
	want := []string{"A=1", "B=x y", "C=3"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q want %q", got, want)
	}
}

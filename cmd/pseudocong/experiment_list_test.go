package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/pseudocong/pseudocong/experiments"
	"github.com/pseudocong/pseudocong/experiments/tcpexp"
)

// experiment list shows every spec built into the binary — package
// experiments' and tcpexp's, high-bdp's three, policing, mptcp, vcc —
// each with a command that exists and names the spec where it takes one.
func TestExperimentListShowsEverySpecWithItsCommand(t *testing.T) {
	var out bytes.Buffer
	root := newRootCommand()
	root.SetOut(&out)
	root.SetArgs([]string{"experiment", "list"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	want := append(append(experiments.BuiltinSpecNames(), tcpexp.BuiltinSpecNames()...),
		"high-bdp", "high-bdp-ci", "high-bdp-20", "policing", "mptcp", "vcc")
	var names []string
	lines := strings.Split(out.String(), "\n")
	for i, l := range lines {
		if l == "" || strings.HasPrefix(l, " ") {
			continue
		}
		name, desc, ok := strings.Cut(l, ": ")
		if !ok || desc == "" {
			t.Errorf("header line %q: want NAME: DESCRIPTION", l)
			continue
		}
		names = append(names, name)
		cmdLine, ok := strings.CutPrefix(strings.TrimSpace(lines[min(i+1, len(lines)-1)]), "command: pseudocong ")
		if !ok {
			t.Errorf("%s: no command line after the header, got %q", name, lines[i+1])
			continue
		}
		args := strings.Fields(cmdLine)
		c, rest, err := newRootCommand().Find(args)
		if err != nil || !c.Runnable() || c.Name() == "pseudocong" {
			t.Errorf("%s: command %q is not one of the binary's: %v", name, cmdLine, err)
			continue
		}
		if name != "policing" && !slices.Contains(args, name) {
			t.Errorf("%s: command %q does not name the spec (rest %v)", name, cmdLine, rest)
		}
	}
	for _, n := range want {
		if !slices.Contains(names, n) {
			t.Errorf("spec %s not listed", n)
		}
	}
	if len(names) != len(want) {
		t.Errorf("listed %v, want %v", names, want)
	}
}

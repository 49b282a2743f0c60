package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pseudocong/pseudocong/experiments/mitlive"
)

// Bad variants and sizes are usage errors (exit 2) before anything runs;
// --help shows every default.
func TestMitigationsLiveUsage(t *testing.T) {
	run := func(args ...string) (string, error) {
		cmd := newMitigationsCommand()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs(args)
		cmd.SetContext(context.Background())
		err := cmd.Execute()
		return out.String(), err
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"live", "--variants", "baseline,sideways"}, "unknown token"},
		{[]string{"live", "--variants", "frto"}, "simulated TCP option"},
		{[]string{"live", "--variants", "rto_min=1.5ms"}, "whole number of milliseconds"},
		{[]string{"live", "--variants", "tcp_frto="}, "unknown knob"},
		{[]string{"live", "--rounds", "0"}, "must be positive"},
		{[]string{"live", "--exchange", "0"}, "not 0"},
		{[]string{"live", "--testbed", "muchtoolong"}, "at most 8"},
		{[]string{"live", "--rate", "x"}, "invalid argument"},
	} {
		_, err := run(c.args...)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want a usage error with %q", c.args, err, c.want)
		}
	}
	help, err := run("live", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`(default "pica8-p3297")`, "(default 100)", "(default 1000)", `(default "ascending")`,
		"(default 16384)", "(default 3)", "[" + strings.Join(mitlive.DefaultVariants, ",") + "]"} {
		if !strings.Contains(help, want) {
			t.Errorf("--help lacks %q:\n%s", want, help)
		}
	}
}

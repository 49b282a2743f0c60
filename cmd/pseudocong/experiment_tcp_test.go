package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// experiment run sends paper-tcp and mitigations to package tcpexp; the
// flags that do not apply to them are usage errors (exit 2), before
// anything runs.
func TestExperimentRunTCPSpecUsageErrors(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "mitigations", "--out", out, "--backend", "live"}, "sim backend only"},
		{[]string{"run", "paper-tcp", "--out", out, "--backend", "ns3"}, "want sim or live"},
		{[]string{"run", "paper-tcp", "--out", out, "--profile", "ideal"}, "--profile does not apply"},
		{[]string{"run", "mitigations", "--out", out, "--shard", "0/2"}, "--shard does not apply"},
		{[]string{"run", "mitigations", "--out", out, "--workers", "-1"}, "must not be negative"},
	} {
		_, _, err := runExperimentCmd(t, c.args...)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want a usage error with %q", c.args, err, c.want)
		}
	}
}

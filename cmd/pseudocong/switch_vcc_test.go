package main

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/softswitch"
)

// vccSwitch parses args as the switch command does and runs setupVCC on a
// switch whose ports 1 and 2 are in-memory stand-ins for s1-eth1, s1-eth2.
func vccSwitch(t *testing.T, args ...string) (*softswitch.Switch, *prometheus.Registry, error) {
	t.Helper()
	cmd := newSwitchCommand()
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	v, err := newViper(cmd)
	if err != nil {
		t.Fatal(err)
	}
	sw := softswitch.New(clock.Wall{}, softswitch.Config{})
	for no := uint16(1); no <= 2; no++ {
		if err := sw.AddPort(softswitch.NewMemPort(no, "p", softswitch.MemPortMAC(1, no), nil)); err != nil {
			t.Fatal(err)
		}
	}
	reg := prometheus.NewRegistry()
	return sw, reg, setupVCC(v, sw, []string{"s1-eth1", "s1-eth2"}, reg, slog.New(slog.DiscardHandler))
}

func TestVCCPortFlag(t *testing.T) {
	_, reg, err := vccSwitch(t, "--vcc-port", "s1-eth1,s1-eth2")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := testutil.GatherAndCount(reg, "pseudocong_vcc_flows"); err != nil || n != 1 {
		t.Fatalf("pseudocong_vcc_flows: %d series, %v", n, err)
	}
	// From the config file too.
	path := filepath.Join(t.TempDir(), "sw.yaml")
	if err := os.WriteFile(path, []byte("vcc-port: [s1-eth2]\nvcc-max-flows: 10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := vccSwitch(t, "--config", path); err != nil {
		t.Fatal(err)
	}
}

func TestVCCUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--vcc-port", "eth9"}, "--vcc-port eth9: not a --port interface"},
		{[]string{"--vcc-port", "s1-eth1", "--vcc-port", "s1-eth1"}, "given twice"},
		{[]string{"--vcc-port", "s1-eth1", "--vcc-max-flows", "0"}, "--vcc-max-flows 0"},
		{[]string{"--vcc-port", "s1-eth1", "--vcc-idle-timeout", "0s"}, "--vcc-idle-timeout 0s"},
	} {
		_, _, err := vccSwitch(t, c.args...)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want a usage error containing %q", c.args, err, c.want)
		}
	}
}

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pseudocong/pseudocong/netsim"
	"github.com/pseudocong/pseudocong/softswitch/egress"
)

// linkEmuViper is the switch command's viper after parsing args.
func linkEmuViper(t *testing.T, args ...string) ([]string, map[string]egress.Config, error) {
	t.Helper()
	cmd := newSwitchCommand()
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	v, err := newViper(cmd)
	if err != nil {
		t.Fatal(err)
	}
	cfgs, err := parseLinkEmu(v, v.GetStringSlice("port"))
	return v.GetStringSlice("port"), cfgs, err
}

func TestLinkEmuFlags(t *testing.T) {
	_, cfgs, err := linkEmuViper(t, "--port", "s1-eth1", "--port", "s1-eth2",
		"--port-qdisc", "s1-eth2=tbf,rate=20mbit,burst=32kb,latency=50ms",
		"--port-delay", "s1-eth2=15ms,limit=4mb", "--port-loss", "s1-eth1=1%", "--port-rate", "s1-eth1=10mbit")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfgs) != 2 {
		t.Fatalf("configs for %d ports, want 2: %v", len(cfgs), cfgs)
	}
	// The spec's commas survive viper's CSV round-trip of a StringArray.
	if got := checkEgress(t, cfgs["s1-eth2"]); got != "tbf 15ms 4194304 0" {
		t.Errorf("s1-eth2: %s", got)
	}
	if got := checkEgress(t, cfgs["s1-eth1"]); got != "none 0s 0 10000000 loss" {
		t.Errorf("s1-eth1: %s", got)
	}
}

// The config file takes the flags' keys.
func TestLinkEmuConfigFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "switch.yaml")
	yaml := `port: [s1-eth1, s1-eth2]
port-qdisc:
  - "s1-eth2=tbf,rate=20mbit,burst=32kb,latency=50ms"
port-delay: ["s1-eth1=15ms"]
`
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	_, cfgs, err := linkEmuViper(t, "--config", path)
	if err != nil {
		t.Fatal(err)
	}
	if got := checkEgress(t, cfgs["s1-eth2"]); got != "tbf 0s 0 0" {
		t.Errorf("s1-eth2: %s", got)
	}
	if got := checkEgress(t, cfgs["s1-eth1"]); got != "none 15ms 0 0" {
		t.Errorf("s1-eth1: %s", got)
	}
}

func TestLinkEmuUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--port-qdisc", "s1-eth2=tbf,rate=20xbit,burst=32kb,latency=50ms"}, `--port-qdisc "s1-eth2=tbf,rate=20xbit,burst=32kb,latency=50ms": qdisc "tbf,rate=20xbit,burst=32kb,latency=50ms": rate: rate "20xbit": unknown unit "xbit"`},
		{[]string{"--port-qdisc", "eth9=droptail"}, `eth9 is not a --port interface`},
		{[]string{"--port-qdisc", "s1-eth2"}, `want IFNAME=SPEC`},
		{[]string{"--port-delay", "s1-eth2=15"}, `--port-delay "s1-eth2=15": time "15": no unit`},
		{[]string{"--port-delay", "s1-eth2=15ms,cap=1mb"}, `unknown parameter "cap=1mb"`},
		{[]string{"--port-loss", "s1-eth2=2"}, `--port-loss "s1-eth2=2": loss "2": probability "2": want 0..1`},
		{[]string{"--port-rate", "s1-eth2=fast"}, `--port-rate "s1-eth2=fast"`},
		{[]string{"--port-loss", "s1-eth2=1%", "--port-loss", "s1-eth2=2%"}, `--port-loss: s1-eth2 given twice`},
	} {
		_, _, err := linkEmuViper(t, append([]string{"--port", "s1-eth2"}, c.args...)...)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want a usage error containing %q", c.args, err, c.want)
		}
	}
}

// checkEgress summarises a config as "qdisc delay delaylimit rate [loss]".
func checkEgress(t *testing.T, c egress.Config) string {
	t.Helper()
	if !c.Enabled() {
		t.Fatalf("%+v: not enabled", c)
	}
	q := "none"
	if _, ok := c.Qdisc.(*netsim.TBF); ok {
		q = "tbf"
	}
	s := fmt.Sprintf("%s %v %d %d", q, c.Delay, c.DelayLimit, c.Rate)
	if c.Loss != nil {
		s += " loss"
	}
	return s
}

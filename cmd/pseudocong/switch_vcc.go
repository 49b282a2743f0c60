package main

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/softswitch"
	"github.com/pseudocong/pseudocong/softswitch/vcc"
)

// Virtualized congestion control (vCC, docs/vcc.md) on the tenant-facing
// --port interfaces.

const vccHelp = `

Virtualized congestion control (docs/vcc.md) on tenant-facing --port
interfaces: a non-ECN tenant's TCP flows are negotiated ECN-capable,
their data is marked ECT(0), and congestion marks coming back throttle
the receive window in the ACKs to the tenant, ECN bits hidden from it:

  --vcc-port s1-eth1 --vcc-port s1-eth2      (or --vcc-port s1-eth1,s1-eth2)

Counters: pseudocong_vcc_*.`

func addVCCFlags(f *pflag.FlagSet) {
	f.StringSlice("vcc-port", nil, "tenant-facing --port interface to run vCC on (repeatable or comma-separated)")
	f.Int("vcc-max-flows", vcc.DefaultMaxFlows, "vCC flow table size, shared by the --vcc-port interfaces; new flows beyond it pass untranslated (counted)")
	f.Duration("vcc-idle-timeout", vcc.DefaultIdleTimeout, "a vCC flow with no frame for this long is removed")
	f.String("vcc-react", "rtt", "how often vCC may cut a flow's window: rtt (at most once per smoothed RTT) or window (once per window of data, as a Linux ECN sender)")
}

// setupVCC installs one shared vCC Translator on the --vcc-port
// interfaces (numbered as --port numbers them: 1, 2, … in order).
func setupVCC(v *viper.Viper, sw *softswitch.Switch, ifnames []string, reg prometheus.Registerer, log *slog.Logger) error {
	var names []string
	for _, n := range v.GetStringSlice("vcc-port") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return nil
	}
	maxFlows, idle := v.GetInt("vcc-max-flows"), v.GetDuration("vcc-idle-timeout")
	if maxFlows < 1 {
		return usageErrorf("--vcc-max-flows %d: want >= 1", maxFlows)
	}
	if idle <= 0 {
		return usageErrorf("--vcc-idle-timeout %v: want > 0", idle)
	}
	react, err := vcc.ParseReact(v.GetString("vcc-react"))
	if err != nil {
		return usageErrorf("--vcc-react: %w", err)
	}
	no := map[string]uint16{}
	for i, n := range ifnames {
		no[n] = uint16(i + 1)
	}
	seen := map[string]bool{}
	for _, n := range names {
		if _, ok := no[n]; !ok {
			return usageErrorf("--vcc-port %s: not a --port interface", n)
		}
		if seen[n] {
			return usageErrorf("--vcc-port %s given twice", n)
		}
		seen[n] = true
	}
	met, err := vcc.NewMetrics(reg)
	if err != nil {
		return err
	}
	tr := vcc.New(clock.Wall{}, vcc.Config{MaxFlows: maxFlows, IdleTimeout: idle, React: react, Metrics: met})
	for _, n := range names {
		if err := sw.SetPortFilter(no[n], vcc.PortFilter{T: tr}); err != nil {
			return fmt.Errorf("--vcc-port %s: %w", n, err)
		}
		log.Info("vCC on port", "port", no[n], "iface", n, "react", react)
	}
	return nil
}

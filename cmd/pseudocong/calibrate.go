package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pseudocong/pseudocong/calibrate"
)

// newCalibrateCommand is `pseudocong calibrate`: measure an OpenFlow 1.0
// switch from the controller's seat and two data ports, and fit a profile.
func newCalibrateCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "calibrate",
		Short: "Measure an OpenFlow 1.0 switch and fit a profile the simulator can replay",
		Long: `calibrate acts as the switch's controller (--switch dials its passive
OpenFlow port; --listen waits for the switch to connect) and sends probe frames
through two of its data ports (--data IF_IN,IF_OUT: the host interfaces cabled
to them, read and written with AF_PACKET). It measures the Packet-In path
(isolated misses, a burst, an overflowing burst), the hit delay and the
PACKET_OUT path, and the insert cost against occupancy for ascending,
descending, constant and random priorities, every rule confirmed by a
forwarded probe; then the table's capacity and cache behaviour. It removes
everything it installed, checks the table against the snapshot it took
first, and writes the fitted profile (--out) and a report with plots
(--report). A run that stops early writes a profile marked partial and
exits 1. See docs/calibrate.md.

  pseudocong calibrate --listen ptcp:6653 --data veth-in,veth-out --budget 10m`,
		Args: cobra.NoArgs,
		RunE: runCalibrate,
	}
	addCommonFlags(cmd)
	f := cmd.Flags()
	f.String("switch", "", "the switch's passive OpenFlow target to dial (tcp:HOST:PORT)")
	f.String("listen", "", "wait for the switch to connect here instead (ptcp:PORT[:IP])")
	f.String("data", "", "IF_IN,IF_OUT: host interfaces cabled to two switch ports (required)")
	f.String("out", "calibrated.yaml", "profile YAML to write")
	f.String("report", "calibrate-report", "directory for report.md and its plots (empty: none)")
	f.String("name", "calibrated", "profile name")
	f.Int("max-rules", 4096, "most probe rules per priority pattern (the ascending fill should exceed the table's fast capacity)")
	f.Duration("budget", calibrateDefaultBudget, "the whole run, clean-up included, stops within this")
	f.String("patterns", strings.Join(calibrate.Patterns, ","), "priority patterns to measure, in order (ascending first: its fill probes the capacity)")
	f.String("batch", "5,20", "FLOW_MODs per timed batch, used in turn")
	f.Int("isolated-misses", 25, "isolated misses for the flush timer")
	f.Duration("isolated-spacing", 250e6, "mean spacing of the isolated misses (keep above the flush period)")
	f.Int("paced-misses", 15, "misses at each spacing from 200us to 100ms, for the upcall latency against the rate (0: none)")
	f.Int("burst-misses", 300, "misses in the rate/batching burst")
	f.Int("queue-burst", 2000, "misses in the overflow burst (queue limit, drops)")
	f.Int("hit-probes", 200, "probes for the hit delay")
	f.Int("packet-outs", 100, "PACKET_OUTs timed")
	f.String("hit-delay-stat", "p10", "hit_delay written from this statistic of the one-way delays: p10, min or median")
	f.Uint64("seed", 1, "seed of the random priority pattern and miss spacing")
	return cmd
}

const calibrateDefaultBudget = 30 * 60 * 1e9

// pacedGaps is the paced misses' spacings: the defaults, none with
// --paced-misses 0 (Config.Defaults would restore them for a nil slice).
func pacedGaps(n int) []time.Duration {
	if n == 0 {
		return []time.Duration{}
	}
	return nil
}

func runCalibrate(cmd *cobra.Command, _ []string) error {
	v, log, err := setupCommand(cmd)
	if err != nil {
		return err
	}
	data := strings.Split(v.GetString("data"), ",")
	if len(data) != 2 {
		return usageErrorf("--data wants IF_IN,IF_OUT, got %q", v.GetString("data"))
	}
	var batches []int
	for _, s := range strings.Split(v.GetString("batch"), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return usageErrorf("--batch: %q is not a number", s)
		}
		batches = append(batches, n)
	}
	switch v.GetString("hit-delay-stat") {
	case "p10", "min", "median":
	default:
		return usageErrorf("--hit-delay-stat %q: want p10, min or median", v.GetString("hit-delay-stat"))
	}
	cfg := calibrate.Config{
		Switch: v.GetString("switch"), Listen: v.GetString("listen"),
		DataIn: strings.TrimSpace(data[0]), DataOut: strings.TrimSpace(data[1]),
		MaxRules: v.GetInt("max-rules"), Budget: v.GetDuration("budget"),
		BatchSizes: batches, Patterns: strings.Split(v.GetString("patterns"), ","),
		IsolatedMisses: v.GetInt("isolated-misses"), IsolatedSpacing: v.GetDuration("isolated-spacing"),
		PacedMisses: v.GetInt("paced-misses"), PacedGaps: pacedGaps(v.GetInt("paced-misses")),
		BurstMisses: v.GetInt("burst-misses"), QueueBurst: v.GetInt("queue-burst"),
		HitProbes: v.GetInt("hit-probes"), PacketOuts: v.GetInt("packet-outs"),
		Seed: v.GetUint64("seed"), Log: log, Progress: cmd.ErrOrStderr(),
	}
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return usageErrorf("%w", err)
	}
	res, err := calibrate.Run(cmd.Context(), cfg)
	if err != nil {
		return err
	}
	fits := calibrate.Analyse(res)
	fmt.Fprintln(cmd.ErrOrStderr(), fits)
	out, missing, perr := calibrate.WriteProfile(res, fits, calibrate.ProfileOptions{Name: v.GetString("name"), HitDelayFrom: v.GetString("hit-delay-stat")})
	path := v.GetString("out")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		return fmt.Errorf("writing the profile: %w", err)
	}
	if perr != nil {
		return perr
	}
	fmt.Fprintf(cmd.OutOrStdout(), "profile written to %s\n", path)
	if dir := v.GetString("report"); dir != "" {
		if err := calibrate.WriteReport(dir, res, fits, out); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "report written to %s\n", filepath.Join(dir, "report.md"))
	}
	if res.Cleanup.Leftover > 0 || res.Cleanup.Err != "" {
		return fmt.Errorf("clean-up incomplete: %d calibrate rules left on the switch (cookie 0xca1b...): %s", res.Cleanup.Leftover, res.Cleanup.Err)
	}
	if res.Partial {
		return fmt.Errorf("partial profile (partial: true) written to %s: %s; not measured: %s", path, res.StopReason, strings.Join(missing, ", "))
	}
	return nil
}

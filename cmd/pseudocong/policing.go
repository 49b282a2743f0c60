package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"time"

	"github.com/spf13/cobra"

	"github.com/pseudocong/pseudocong/experiments/policing"
)

// newPolicingCommand is `pseudocong policing`: paper 003's experiment.
func newPolicingCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policing",
		Short: "Paper 003: policing vs shaping at an SD-WAN CPE, CUBIC vs BBR (sim or live)",
		Long: `policing runs the spec's matrix (CUBIC, BBR and BBR on the client only; every
mode; uploads and downloads; every server; §6's end-to-end check) on the
topology the spec names, in the simulator (netsim links, our TCP) or live
(iperf3 between namespace hosts through one pseudocong switch process per
switch of the path; needs root and iperf3). It writes summary-<backend>.json,
series-<backend>.csv and throughput plots to --out and prints the summary's
headline keys and the must-show checks (docs/policing.md).

  pseudocong policing --backend sim --out /tmp/policing
  pseudocong policing --backend live --cells '^(cubic|bbr)\.(police|shape)\.' --duration 10s`,
		Args: cobra.NoArgs,
		RunE: runPolicing,
	}
	f := cmd.Flags()
	f.String("spec", "", "experiment spec file (empty: the built-in one, experiments/policing/specs/policing.yaml)")
	f.String("backend", "sim", "sim or live")
	f.String("out", "", "directory for the summary, series and plots (empty: print only)")
	f.String("cells", "", "regexp on the cells' headline keys (e.g. cubic.police.up) to run only those")
	f.Bool("all-servers", false, "run every server of the spec (default: only the first, whose keys are the headline ones)")
	f.Duration("duration", 0, "override the spec's transfer duration (0: the spec's)")
	f.Duration("omit", -1, "override the spec's omitted start (negative: the spec's)")
	f.Duration("host-jitter", -1, "override the spec's host timing noise in the sim: each segment leaves after a uniform random delay in [0, this) (negative: the spec's)")
	f.Bool("json", false, "print the whole summary as one JSON object")
	addCommonFlags(cmd)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	return cmd
}

func runPolicing(cmd *cobra.Command, _ []string) error {
	v, log, err := setupCommand(cmd)
	if err != nil {
		return err
	}
	s, err := policing.LoadSpec(v.GetString("spec"))
	if err != nil {
		return usageErrorf("%w", err)
	}
	if d := v.GetDuration("duration"); d > 0 {
		s.Duration = policing.Duration(d)
	}
	if o := v.GetDuration("omit"); o >= 0 {
		s.Omit = policing.Duration(o)
	}
	if j := v.GetDuration("host-jitter"); j >= 0 {
		if j > time.Second {
			return usageErrorf("--host-jitter %v: want 0..1s", j)
		}
		s.HostJitter = policing.Duration(j)
	}
	if s.Duration <= s.Omit {
		return usageErrorf("--duration %v must exceed --omit %v", s.Duration.D(), s.Omit.D())
	}
	var only *regexp.Regexp
	if c := v.GetString("cells"); c != "" {
		if only, err = regexp.Compile(c); err != nil {
			return usageErrorf("--cells: %w", err)
		}
	}
	all := v.GetBool("all-servers")
	sel := func(c policing.Cell) bool {
		return (all || c.Server == s.Servers[0]) && (only == nil || only.MatchString(c.Key(true)))
	}
	var b policing.Backend
	switch v.GetString("backend") {
	case "sim":
		b = policing.Sim{}
	case "live":
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		l := &policing.Live{Binary: exe, Log: log}
		defer func() {
			if err := l.Close(); err != nil {
				log.Error("live cleanup", "err", err)
			}
		}()
		b = l
	default:
		return usageErrorf("--backend %q: want sim or live", v.GetString("backend"))
	}
	res, err := policing.Run(s, b, policing.Options{Select: sel, Log: log})
	if err != nil {
		return err
	}
	if dir := v.GetString("out"); dir != "" {
		if err := res.Write(dir); err != nil {
			return err
		}
	}
	out := cmd.OutOrStdout()
	if v.GetBool("json") {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(res.Summary)
	}
	for _, k := range policing.SortedKeys(res.Summary) {
		fmt.Fprintf(out, "%s %.4g\n", k, res.Summary[k])
	}
	for _, c := range policing.MustShow(res.Summary, b.Name()) {
		mark := "ok  "
		if !c.OK {
			mark = "MISS"
		}
		fmt.Fprintf(out, "%s %s: %s\n", mark, c.Name, c.Detail)
	}
	return nil
}

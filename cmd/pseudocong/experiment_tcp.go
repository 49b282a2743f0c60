package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/pseudocong/pseudocong/experiments"
	"github.com/pseudocong/pseudocong/experiments/tcpexp"
)

// runTCPExperiment runs one of package tcpexp's specs (paper-tcp,
// mitigations): `experiment run` sends their names here. The sim backend
// runs them all; --backend live runs paper-tcp's cache cell with kernel
// TCP (runTCPLive); --profile, --topology, --shard and --series-interval
// do not apply.
func runTCPExperiment(cmd *cobra.Command, v *viper.Viper, name string) error {
	backend := v.GetString("backend")
	if backend != experiments.BackendSim && backend != experiments.BackendLive {
		return usageErrorf("spec %s: --backend %s: want %s or %s", name, backend, experiments.BackendSim, experiments.BackendLive)
	}
	for _, f := range []string{"profile", "topology", "shard"} {
		if v.GetString(f) != "" {
			return usageErrorf("spec %s: --%s does not apply (the spec names its switches and network)", name, f)
		}
	}
	spec, err := tcpexp.LoadSpec(name)
	if err != nil {
		return usageErrorf("%w", err)
	}
	opts := tcpexp.Options{Workers: v.GetInt("workers")}
	if opts.Workers < 0 {
		return usageErrorf("--workers %d must not be negative", opts.Workers)
	}
	if s := v.GetInt64("seed"); s >= 0 {
		seed := uint64(s)
		opts.Seed = &seed
	}
	out := v.GetString("out")
	if err := experiments.CheckOutputDir(out); err != nil {
		return usageErrorf("--out: %w", err)
	}
	if backend == experiments.BackendLive {
		return runTCPLive(cmd, v, spec, opts, out)
	}
	stderr := cmd.ErrOrStderr()
	if !v.GetBool("quiet") {
		fmt.Fprintf(stderr, "running spec %s (%s), backend sim\n", spec.Name, spec.Source)
		opts.Progress = experiments.NewProgress(stderr).Update
	}
	res, err := tcpexp.Execute(cmd.Context(), spec, opts)
	if err != nil {
		return err
	}
	files, err := tcpexp.WriteOutputs(out, res)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "spec %s: %d simulations in %.1f s\nwrote %d files to %s (summary.json, report.md", spec.Name, len(res.Runs), res.Wall.Seconds(), len(files), out)
	if len(spec.Mitigations) > 0 {
		fmt.Fprintf(cmd.OutOrStdout(), ", mitigations.md")
	}
	fmt.Fprintln(cmd.OutOrStdout(), ")")
	return nil
}

// runTCPLive is `experiment run paper-tcp --backend live`: the spec's
// cache cells with kernel TCP through the live switch (tcpexp.ExecuteLive),
// ours beside them. It needs root; the testbed's name goes to the log, so
// `pseudocong testbed down --name NAME` cleans up after a SIGKILL.
func runTCPLive(cmd *cobra.Command, v *viper.Viper, spec *tcpexp.Spec, opts tcpexp.Options, out string) error {
	if len(spec.Mitigations) > 0 {
		return usageErrorf("spec %s: a mitigations spec runs on the sim backend only", spec.Name)
	}
	if opts.Seed != nil {
		spec.Seed = *opts.Seed
	}
	cells, skipped := tcpexp.LiveCells(spec)
	if len(cells) == 0 {
		return usageErrorf("spec %s: no cell the live backend runs (%s)", spec.Name, strings.Join(skipped, "; "))
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("spec %s: the live backend needs root (network namespaces, veths, AF_PACKET sockets)", spec.Name)
	}
	lo := tcpexp.LiveOptions{Workers: opts.Workers, Logger: slog.Default()}
	stderr := cmd.ErrOrStderr()
	if !v.GetBool("quiet") {
		fmt.Fprintf(stderr, "running spec %s (%s), backend live: cells %d, not run live: %s\n", spec.Name, spec.Source, len(cells), strings.Join(skipped, "; "))
		lo.Progress = experiments.NewProgress(stderr).Update
	}
	res, err := tcpexp.ExecuteLive(cmd.Context(), spec, lo)
	if err != nil {
		return err
	}
	files, err := tcpexp.WriteLiveOutputs(out, res)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "spec %s (live): %d live cells, %d rounds of %v per switch, in %.1f s\nwrote %d files to %s (summary.json, report.md)\n",
		spec.Name, len(res.Cells), res.Rounds, res.Duration, res.Wall.Seconds(), len(files), out)
	return nil
}

// listTCPSpecs prints package tcpexp's specs for `experiment list`.
func listTCPSpecs(w io.Writer) error {
	for _, name := range tcpexp.BuiltinSpecNames() {
		s, err := tcpexp.LoadSpec(name)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s: %s\n", s.Name, s.Description)
		fmt.Fprintf(w, "  command: pseudocong experiment run %s\n", name)
		for _, c := range s.Cells {
			fmt.Fprintf(w, "  %-10s bulk TCP; %d flows; timers %v; %s against %s; %v\n", c.ID, c.Flows, s.Timers, s.Profile, s.Reference, s.Duration)
		}
		if len(s.Mitigations) > 0 {
			fmt.Fprintf(w, "  mitigations: %s\n", strings.Join(s.Mitigations, ", "))
		}
	}
	return nil
}

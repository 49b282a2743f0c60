package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/pseudocong/pseudocong/experiments"
	"github.com/pseudocong/pseudocong/experiments/tcpexp"
)

// runTCPExperiment runs one of package tcpexp's specs (paper-tcp,
// mitigations): `experiment run` sends their names here. Only the sim
// backend runs them; --profile, --topology, --shard and --series-interval
// do not apply.
func runTCPExperiment(cmd *cobra.Command, v *viper.Viper, name string) error {
	if b := v.GetString("backend"); b != experiments.BackendSim {
		return usageErrorf("spec %s runs on the sim backend only (got --backend %s)", name, b)
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

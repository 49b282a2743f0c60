package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/pseudocong/pseudocong/experiments/vccgrid"
)

// newVCCCommand is `pseudocong vcc`: virtualized congestion control in
// the simulator (paper 001).
func newVCCCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "vcc",
		Short: "Virtualized congestion control in the simulator (paper 001's experiments)",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newVCCGridCommand())
	return cmd
}

func newVCCGridCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "grid",
		Short: "Run the vcc spec's four experiments with and without vCC",
		Long: `vcc grid runs every cell of a vcc spec (--spec vcc, built in: paper 001's
experiments (a)-(d), experiments/vccgrid/specs/vcc.yaml; or a file in its
schema): tenant senders through a RED+ECN bottleneck, each cell without and
with the vCC translator (package softswitch/vcc, on the virtual clock) at the
tenants' edge, every seed. It writes summary.json
(vcc.{a|b|c|d}.{cell}.throughput_ratio_nonecn_over_ecn.{with|without},
vcc.{...}.jain.{with|without}, vcc.{...}.mbps_ecn and mbps_nonecn), cells.csv
(every run) and one per-class throughput figure per experiment into --out.
--reduced runs the spec's smaller grid (the one the tests check).

  pseudocong vcc grid --out out/vcc
  pseudocong vcc grid --out out/vcc-reduced --reduced
  pseudocong vcc grid --spec my-vcc.yaml --out out/my-vcc`,
		Args: cobra.NoArgs,
		RunE: runVCCGrid,
	}
	f := cmd.Flags()
	f.String("spec", "vcc", `the spec: "vcc" (built in: paper 001's experiments) or a path to a .yaml file in its schema`)
	f.String("out", "out/vcc", "output directory")
	f.Bool("reduced", false, "run the spec's reduced grid")
	f.Int("workers", runtime.GOMAXPROCS(0), "runs in parallel")
	addCommonFlags(cmd)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	return cmd
}

func runVCCGrid(cmd *cobra.Command, _ []string) error {
	v, log, err := setupCommand(cmd)
	if err != nil {
		return err
	}
	if v.GetInt("workers") < 1 {
		return usageErrorf("--workers %d: want at least 1", v.GetInt("workers"))
	}
	if v.GetString("out") == "" {
		return usageErrorf("--out must not be empty")
	}
	spec, err := vccgrid.Load(v.GetString("spec"))
	if err != nil {
		return usageErrorf("--spec: %w", err)
	}
	if v.GetBool("reduced") {
		spec = spec.Reduce()
	}
	log.Info("vcc grid", "spec", spec.Name, "cells", len(spec.Cells()), "seeds", spec.Seeds, "duration", spec.Duration)
	res, err := vccgrid.Run(cmd.Context(), spec, v.GetInt("workers"))
	if err != nil {
		return err
	}
	if err := res.WriteDir(v.GetString("out")); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "vcc grid: %d cells × 2 sides × %d seeds in %.1f s, results in %s\n",
		len(res.Cells), spec.Seeds, res.Wall.Seconds(), v.GetString("out"))
	return nil
}

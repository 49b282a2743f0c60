package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/pseudocong/pseudocong/experiments/mptcpgrid"
)

// newMPTCPCommand is `pseudocong mptcp`: MPTCP in the simulator.
func newMPTCPCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mptcp",
		Short: "MPTCP in the simulator (paper 004's policy grid)",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newMPTCPGridCommand())
	return cmd
}

func newMPTCPGridCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "grid",
		Short: "Run the mptcp spec's grid of timeout-retransmission policies",
		Long: `mptcp grid runs every cell of an mptcp spec (--spec mptcp, built in: paper
004's grid, experiments/mptcpgrid/specs/mptcp.yaml; or a file in its schema):
one bulk MPTCP transfer over two paths per policy, delay pair, subflow-2 loss,
receive buffer and seed, on the virtual clock. It writes summary.json
(mptcp.goodput_mbps.{policy}.d{D1}-{D2}.l{L2}.b{KB}, mptcp.blocked_share...),
cells.csv (every run) and one goodput and one blocked-share figure per delay
pair and buffer into --out. --reduced runs the spec's smaller grid (the one
the tests check).

  pseudocong mptcp grid --out out/mptcp
  pseudocong mptcp grid --out out/mptcp-reduced --reduced
  pseudocong mptcp grid --spec my-grid.yaml --out out/my-grid`,
		Args: cobra.NoArgs,
		RunE: runMPTCPGrid,
	}
	f := cmd.Flags()
	f.String("spec", "mptcp", `the spec: "mptcp" (built in: paper 004's grid) or a path to a .yaml file in its schema`)
	f.String("out", "out/mptcp", "output directory")
	f.Bool("reduced", false, "run the spec's reduced grid")
	f.Int("workers", runtime.GOMAXPROCS(0), "runs in parallel")
	addCommonFlags(cmd)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	return cmd
}

func runMPTCPGrid(cmd *cobra.Command, _ []string) error {
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
	spec, err := mptcpgrid.Load(v.GetString("spec"))
	if err != nil {
		return usageErrorf("--spec: %w", err)
	}
	if v.GetBool("reduced") {
		spec = spec.Reduce()
	}
	log.Info("mptcp grid", "spec", spec.Name, "cells", len(spec.Cells()), "seeds", spec.Seeds, "duration", spec.Duration)
	res, err := mptcpgrid.Run(cmd.Context(), spec, v.GetInt("workers"))
	if err != nil {
		return err
	}
	if err := res.WriteDir(v.GetString("out")); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "mptcp grid: %d cells × %d seeds in %.1f s, results in %s\n",
		len(res.Cells), spec.Seeds, res.Wall.Seconds(), v.GetString("out"))
	return nil
}

package main

import (
	"context"
	"time"

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
	cmd.AddCommand(newGridCommand(gridCommand{
		name:  "vcc",
		short: "Run the vcc spec's four experiments with and without vCC",
		long: `vcc grid runs every cell of a vcc spec (--spec vcc, built in: paper 001's
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
		specHelp: `the spec: "vcc" (built in: paper 001's experiments) or a path to a .yaml file in its schema`,
		sides:    " × 2 sides",
		load: func(arg string, reduced bool) (gridJob, error) {
			s, err := vccgrid.Load(arg)
			if err != nil {
				return gridJob{}, err
			}
			if reduced {
				s = s.Reduce()
			}
			return gridJob{base: &s.Base, cells: len(s.Cells()), run: func(ctx context.Context, workers int, out string) (time.Duration, error) {
				res, err := vccgrid.Run(ctx, s, workers)
				if err != nil {
					return 0, err
				}
				return res.Wall, res.WriteDir(out)
			}}, nil
		},
	}))
	return cmd
}

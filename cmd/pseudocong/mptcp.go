package main

import (
	"context"
	"time"

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
	cmd.AddCommand(newGridCommand(gridCommand{
		name:  "mptcp",
		short: "Run the mptcp spec's grid of timeout-retransmission policies",
		long: `mptcp grid runs every cell of an mptcp spec (--spec mptcp, built in: paper
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
		specHelp: `the spec: "mptcp" (built in: paper 004's grid) or a path to a .yaml file in its schema`,
		load: func(arg string, reduced bool) (gridJob, error) {
			s, err := mptcpgrid.Load(arg)
			if err != nil {
				return gridJob{}, err
			}
			if reduced {
				s = s.Reduce()
			}
			return gridJob{base: &s.Base, cells: len(s.Cells()), run: func(ctx context.Context, workers int, out string) (time.Duration, error) {
				res, err := mptcpgrid.Run(ctx, s, workers)
				if err != nil {
					return 0, err
				}
				return res.Wall, res.WriteDir(out)
			}}, nil
		},
	}))
	return cmd
}

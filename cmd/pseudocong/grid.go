package main

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/pseudocong/pseudocong/experiments/grid"
)

// gridCommand is a `<name> grid` command (mptcp grid, vcc grid): it runs
// every cell of a spec in package experiments/grid's shape and writes the
// output directory.
type gridCommand struct {
	// name is the built-in spec's (also --out's default out/<name> and
	// the messages' prefix).
	name, short, long string
	specHelp          string // --spec's help
	// sides is " × 2 sides" for a grid that runs every seed of a cell
	// twice, for the closing line.
	sides string
	// load loads --spec, reduced if asked.
	load func(spec string, reduced bool) (gridJob, error)
}

// gridJob is a loaded spec.
type gridJob struct {
	base  *grid.Base
	cells int
	// run runs the grid and writes its outputs into out; it returns the
	// run's wall time.
	run func(ctx context.Context, workers int, out string) (time.Duration, error)
}

func newGridCommand(g gridCommand) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "grid",
		Short: g.short,
		Long:  g.long,
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return g.runE(cmd) },
	}
	f := cmd.Flags()
	f.String("spec", g.name, g.specHelp)
	f.String("out", "out/"+g.name, "output directory")
	f.Bool("reduced", false, "run the spec's reduced grid")
	f.Int("workers", runtime.GOMAXPROCS(0), "runs in parallel")
	addCommonFlags(cmd)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	return cmd
}

func (g gridCommand) runE(cmd *cobra.Command) error {
	v, log, err := setupCommand(cmd)
	if err != nil {
		return err
	}
	workers, out := v.GetInt("workers"), v.GetString("out")
	if workers < 1 {
		return usageErrorf("--workers %d: want at least 1", workers)
	}
	if out == "" {
		return usageErrorf("--out must not be empty")
	}
	job, err := g.load(v.GetString("spec"), v.GetBool("reduced"))
	if err != nil {
		return usageErrorf("--spec: %w", err)
	}
	b := job.base
	log.Info(g.name+" grid", "spec", b.Name, "cells", job.cells, "seeds", b.Seeds, "duration", b.Duration)
	wall, err := job.run(cmd.Context(), workers, out)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s grid: %d cells%s × %d seeds in %.1f s, results in %s\n",
		g.name, job.cells, g.sides, b.Seeds, wall.Seconds(), out)
	return nil
}

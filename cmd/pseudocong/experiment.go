package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pseudocong/pseudocong/experiments"
	"github.com/pseudocong/pseudocong/experiments/highbdp"
	"github.com/pseudocong/pseudocong/experiments/tcpexp"
)

func newExperimentCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "experiment",
		Short: "Run experiment specs (paper 000's tables and figures) and list them",
	}
	cmd.AddCommand(newExperimentRunCommand(), newExperimentMergeCommand(), newExperimentListCommand())
	return cmd
}

func newExperimentRunCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run SPEC",
		Short: "Run a spec (a built-in name such as paper or smoke, or a YAML file) and write its outputs",
		Long: `Run every experiment of SPEC and write into --out:
  summary.json   every result number and the paper's (docs/experiments.md)
  <id>.csv       every sample of each experiment
  *.png          the figures, drawn like the paper's
  report.md      paper number | ours | within tolerance?, misses explained

The outputs appear all at once: they are written into a hidden staging
directory beside --out and renamed into place when every file is on disk,
so a failed run (a full disk) leaves no partial results. --out may be new,
an empty directory, or a previous run's outputs, which are then replaced as
a whole; any other directory is refused before the run.

With --shard i/n (sim backend only) the run is shard i (from 0) of n: it
runs the cells whose index in grid order is i mod n and writes only
shard.json (their outcomes and what identifies the run) into --out;
"experiment merge" combines the n shard directories into the outputs of
the whole run (docs/scale.md).

Exit code 2 means bad input (unknown spec, bad YAML, a profile or spec value
out of its bounds, impossible parameters, bad flags, an --out that cannot
take the outputs); 1 means the run itself failed.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("experiment run takes one SPEC (built-in: %s), got %d arguments",
					strings.Join(append(experiments.BuiltinSpecNames(), tcpexp.BuiltinSpecNames()...), ", "), len(args))
			}
			return nil
		},
		RunE: runExperiment,
	}
	addCommonFlags(cmd)
	cmd.Flags().String("backend", experiments.BackendSim, "backend: "+strings.Join(experiments.Backends, ", ")+" (sim: the switch, agent, TCAM and controller cores on a virtual clock; live: real processes, netns hosts and kernel TCP, needs root)")
	cmd.Flags().String("out", "results", "directory for summary.json, CSVs, figures and report.md: new, empty, or a previous run's (replaced as a whole)")
	cmd.Flags().String("profile", "", "switch profile name or YAML path (default: the spec's)")
	cmd.Flags().Int64("seed", -1, "seed (default: the spec's)")
	cmd.Flags().Int("workers", 0, "runs in parallel (default: number of CPUs); results do not depend on it")
	cmd.Flags().Bool("quiet", false, "no progress output")
	cmd.Flags().Duration("series-interval", 0, "record time series (per link, queue and flow) at this interval into *_series_*.csv and series_*.png (default: the spec's series.interval; negative: none)")
	cmd.Flags().String("topology", "", "network of experiments that name none: a built-in topology, chain:K or a YAML path (default: the spec's, else paper000)")
	cmd.Flags().String("shard", "", "run only shard i/n of the grid (i from 0, e.g. a Kubernetes JOB_COMPLETION_INDEX) and write shard.json for experiment merge")
	cmd.Flags().Int("gc-percent", highbdp.GCPercent, "Go's garbage-collector target (GOGC) for the run: fewer collections of the simulators' long-lived packets for more memory (up to about (1 + N/100) times the live heap); an explicit GOGC in the environment wins; 0 keeps Go's default")
	return cmd
}

func runExperiment(cmd *cobra.Command, args []string) error {
	v, err := newViper(cmd)
	if err != nil {
		return err
	}
	if _, err := newLogger(v); err != nil {
		return err
	}
	if err := mustNotBeEmpty(v, "out"); err != nil {
		return err
	}
	if err := setGCPercent(v.GetInt("gc-percent")); err != nil {
		return err
	}
	if tcpexp.IsSpec(args[0]) {
		return runTCPExperiment(cmd, v, args[0])
	}
	if highbdp.IsSpec(args[0]) { // paper 002's grid (experiments/highbdp)
		return runHighBDP(cmd, v, args[0])
	}
	spec, err := experiments.LoadSpec(args[0])
	if err != nil {
		return usageErrorf("%w", err)
	}
	if t := v.GetString("topology"); t != "" {
		spec.Topology = t
	}
	opts := experiments.Options{
		Backend:        v.GetString("backend"),
		Profile:        v.GetString("profile"),
		Workers:        v.GetInt("workers"),
		SeriesInterval: v.GetDuration("series-interval"),
	}
	if opts.Workers < 0 {
		return usageErrorf("--workers %d must not be negative", opts.Workers)
	}
	if s := v.GetInt64("seed"); s >= 0 {
		seed := uint64(s)
		opts.Seed = &seed
	}
	if s := v.GetString("shard"); s != "" {
		sh, err := experiments.ParseShard(s)
		if err != nil {
			return usageErrorf("--shard: %w", err)
		}
		opts.Shard = &sh
	}
	// Everything the user gave is checked before the run, which can take
	// minutes: the spec against the backend and profile, and --out.
	if err := experiments.CheckInputs(spec, opts); err != nil {
		return usageErrorf("%w", err)
	}
	out := v.GetString("out")
	if err := experiments.CheckOutputDir(out); err != nil {
		return usageErrorf("--out: %w", err)
	}
	stderr := cmd.ErrOrStderr()
	if !v.GetBool("quiet") {
		fmt.Fprintf(stderr, "running spec %s (%s), backend %s\n", spec.Name, spec.Source, opts.Backend)
		opts.Progress = experiments.NewProgress(stderr).Update
	}
	if opts.Shard != nil {
		return runShard(cmd, spec, opts, out)
	}
	res, err := experiments.Execute(cmd.Context(), spec, opts)
	if err != nil {
		var se *experiments.SpecError
		if errors.As(err, &se) {
			return usageErrorf("%w", err)
		}
		return err
	}
	files, err := experiments.WriteOutputs(out, res)
	if err != nil {
		return err
	}
	printRunSummary(cmd.OutOrStdout(), res, out, files)
	return nil
}

// runShard runs one shard of spec and writes its shard.json into out.
func runShard(cmd *cobra.Command, spec *experiments.Spec, opts experiments.Options, out string) error {
	sr, err := experiments.ExecuteShard(cmd.Context(), spec, opts)
	if err != nil {
		var se *experiments.SpecError
		if errors.As(err, &se) {
			return usageErrorf("%w", err)
		}
		return err
	}
	if _, err := experiments.WriteShard(out, sr); err != nil {
		return err
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		abs = out
	}
	fmt.Fprintf(cmd.OutOrStdout(), "spec %s shard %s: %d of %d runs in %.2f s (profile %s, seed %d)\nwrote %s\nwhen every shard is done: pseudocong experiment merge --out DIR SHARD_DIR...\n",
		spec.Name, sr.Shard, len(sr.Run.Cells), sr.GridSize, sr.Run.Wall.Seconds(), sr.Run.Profile.Name, sr.Run.Seed,
		filepath.Join(abs, experiments.ShardFile))
	return nil
}

func newExperimentMergeCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "merge --out DIR SHARD_DIR...",
		Short: "Combine the outputs of every shard of a run (experiment run --shard i/n) into the run's outputs",
		Long: `Read shard.json from every SHARD_DIR (one per shard 0/n ... n-1/n of one
run, in any order) and write into --out exactly what the unsharded run
writes: summary.json, CSVs, figures, report.md, byte for byte apart from
the wall time, which is the sum of the shards' (docs/scale.md). --out is
written atomically, as by experiment run.

Exit code 2 means the shards are not one whole run (a shard missing or
given twice, shards of another spec, seed, profile or shard count, a
directory without shard.json) or --out cannot take the outputs; nothing
is written then. 1 means writing failed.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf("experiment merge takes the shard directories, got none")
			}
			return nil
		},
		RunE: runMerge,
	}
	cmd.Flags().String("out", "results", "directory for the merged outputs: new, empty, or a previous run's (replaced as a whole)")
	return cmd
}

func runMerge(cmd *cobra.Command, args []string) error {
	out, err := cmd.Flags().GetString("out")
	if err != nil {
		return usageErrorf("%w", err)
	}
	if out == "" {
		return usageErrorf("--out is required")
	}
	if err := experiments.CheckOutputDir(out); err != nil {
		return usageErrorf("--out: %w", err)
	}
	// Writing over a shard would destroy an input of the merge.
	if o, err := filepath.Abs(out); err == nil {
		for _, d := range args {
			if a, err := filepath.Abs(d); err == nil && a == o {
				return usageErrorf("--out %s is one of the shard directories", out)
			}
		}
	}
	if highbdp.IsShardDir(args[0]) { // paper 002's shards (experiments/highbdp)
		return mergeHighBDP(cmd, out, args)
	}
	res, err := experiments.Merge(args)
	if err != nil {
		return usageErrorf("%w", err)
	}
	files, err := experiments.WriteOutputs(out, res)
	if err != nil {
		return err
	}
	printRunSummary(cmd.OutOrStdout(), res, out, files)
	return nil
}

func printRunSummary(w io.Writer, res *experiments.Result, out string, files []string) {
	cs := res.Compare()
	fmt.Fprintf(w, "\nspec %s: %d runs in %.2f s (backend %s, profile %s, seed %d)\n\n",
		res.Spec.Name, len(res.Cells), res.Wall.Seconds(), res.Backend, res.Profile.Name, res.Seed)
	fmt.Fprint(w, experiments.CompareTable(cs))
	hits := 0
	for _, c := range cs {
		if c.Within {
			hits++
		}
	}
	fmt.Fprintf(w, "\n%d of %d paper numbers within tolerance; misses are explained in the report.\n", hits, len(cs))
	abs, err := filepath.Abs(out)
	if err != nil {
		abs = out
	}
	fmt.Fprintf(w, "\nwrote %d files to %s:\n  %s (summary), %s (report), CSVs and PNG figures\n",
		len(files), abs, experiments.SummaryFile, experiments.ReportFile)
}

// setGCPercent applies --gc-percent (highbdp.UseGCPercent: an explicit
// GOGC wins, 0 keeps Go's default). Turning the collector off is not
// offered: a long run's memory would grow without bound.
func setGCPercent(n int) error {
	if n < 0 {
		return usageErrorf("--gc-percent %d: want a percentage above 0, or 0 for Go's default", n)
	}
	highbdp.UseGCPercent(n)
	return nil
}

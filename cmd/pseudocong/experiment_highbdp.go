package main

import (
	"fmt"
	"path/filepath"
	"runtime"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/pseudocong/pseudocong/experiments"
	"github.com/pseudocong/pseudocong/experiments/highbdp"
)

// runHighBDP runs the high-bdp spec (paper 002, experiments/highbdp),
// which is not a switch experiment and has its own grid: "experiment run"
// routes it here. --out, --shard, --seed, --workers and --quiet apply; the switch
// flags (--profile, --backend, --topology, ...) do not.
func runHighBDP(cmd *cobra.Command, v *viper.Viper, name string) error {
	spec, err := highbdp.LoadSpec(name)
	if err != nil {
		return usageErrorf("%w", err)
	}
	if s := v.GetInt64("seed"); s >= 0 {
		spec.Seeds = []uint64{uint64(s)}
	}
	shard, count := 0, 1
	if s := v.GetString("shard"); s != "" {
		sh, err := experiments.ParseShard(s)
		if err != nil {
			return usageErrorf("--shard: %w", err)
		}
		shard, count = sh.Index, sh.Count
	}
	workers := v.GetInt("workers")
	switch {
	case workers < 0:
		return usageErrorf("--workers %d must not be negative", workers)
	case workers == 0:
		workers = runtime.GOMAXPROCS(0)
	}
	out := v.GetString("out")
	if err := experiments.CheckOutputDir(out); err != nil {
		return usageErrorf("--out: %w", err)
	}
	stderr := cmd.ErrOrStderr()
	var progress highbdp.Progress
	if !v.GetBool("quiet") {
		fmt.Fprintf(stderr, "running spec %s: %d cells, shard %d/%d, %d at a time\n", spec.Name, len(spec.Cells()), shard, count, workers)
		start := time.Now()
		progress = func(label string, done, total int, sim, of time.Duration, ev uint64) {
			el := time.Since(start).Seconds()
			fmt.Fprintf(stderr, "[%d/%d] %s: %.0f/%.0f s simulated, %d events, %.0f s wall\n", done, total, label, sim.Seconds(), of.Seconds(), ev, el)
		}
	}
	doc, err := highbdp.RunShard(cmd.Context(), spec, name, highbdp.RunOptions{Shard: shard, Count: count, Workers: workers, Progress: progress})
	if err != nil {
		return err
	}
	if count > 1 {
		if err := highbdp.WriteShard(out, doc); err != nil {
			return err
		}
		abs, _ := filepath.Abs(out)
		fmt.Fprintf(cmd.OutOrStdout(), "spec %s shard %d/%d: %d of %d cells\nwrote %s\nwhen every shard is done: pseudocong experiment merge --out DIR SHARD_DIR...\n",
			spec.Name, shard, count, len(doc.Results), doc.Grid, filepath.Join(abs, highbdp.ShardFile))
		return nil
	}
	files, err := highbdp.WriteOutputs(out, spec, doc.Results)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "spec %s: %d cells; wrote %d files into %s\n", spec.Name, len(doc.Results), len(files), out)
	return nil
}

// mergeHighBDP merges high-bdp shard directories.
func mergeHighBDP(cmd *cobra.Command, out string, dirs []string) error {
	rs, name, err := highbdp.Merge(dirs)
	if err != nil {
		return usageErrorf("%w", err)
	}
	spec, err := highbdp.LoadSpec(name)
	if err != nil {
		return usageErrorf("%w", err)
	}
	files, err := highbdp.WriteOutputs(out, spec, rs)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "spec %s: merged %d cells from %d shards; wrote %d files into %s\n", spec.Name, len(rs), len(dirs), len(files), out)
	return nil
}

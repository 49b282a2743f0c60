package deploy

import (
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/pseudocong/pseudocong/experiments/highbdp"
)

// TestKubernetesHighBDP: the high-bdp Indexed Job runs one cell per pod
// (--shard INDEX/n with n = completions = the spec's cells) and the merge
// job lists every shard directory once.
func TestKubernetesHighBDP(t *testing.T) {
	var run, merge batchv1.Job
	decodeStrict(t, filepath.Join("k8s", "high-bdp-job.yaml"), &run)
	decodeStrict(t, filepath.Join("k8s", "high-bdp-merge-job.yaml"), &merge)
	if run.Spec.CompletionMode == nil || *run.Spec.CompletionMode != batchv1.IndexedCompletion || run.Spec.Completions == nil {
		t.Fatal("high-bdp-job.yaml: want an Indexed Job with completions")
	}
	n := int(*run.Spec.Completions)
	c := run.Spec.Template.Spec.Containers[0]
	args := append(slices.Clone(c.Command), c.Args...)
	if len(args) < 4 || !slices.Equal(args[:3], []string{"pseudocong", "experiment", "run"}) || !highbdp.IsSpec(args[3]) {
		t.Fatalf("high-bdp-job.yaml: command %q, want pseudocong experiment run high-bdp ...", args)
	}
	spec, err := highbdp.LoadSpec(args[3])
	if err != nil {
		t.Fatal(err)
	}
	if cells := len(spec.Cells()); cells != n {
		t.Errorf("high-bdp-job.yaml: %d completions for %d cells: want one pod per cell", n, cells)
	}
	if got, want := flagValue(t, args, "--shard"), "$(JOB_COMPLETION_INDEX)/"+strconv.Itoa(n); got != want {
		t.Errorf("--shard %q, want %q", got, want)
	}
	out := flagValue(t, args, "--out")
	mc := merge.Spec.Template.Spec.Containers[0]
	margs := append(slices.Clone(mc.Command), mc.Args...)
	if len(margs) < 5 || !slices.Equal(margs[:3], []string{"pseudocong", "experiment", "merge"}) {
		t.Fatalf("merge: command %q", margs)
	}
	var dirs []string
	for i := 3; i < len(margs); i++ {
		if margs[i] == "--out" {
			i++
			continue
		}
		dirs = append(dirs, margs[i])
	}
	if len(dirs) != n {
		t.Fatalf("merge lists %d directories, want %d", len(dirs), n)
	}
	for i := range n {
		want := filepath.Clean(filepath.Join(filepath.Dir(out), strconv.Itoa(i)))
		if !slices.Contains(dirs, want) {
			t.Errorf("merge does not list %s", want)
		}
	}
}

package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/pseudocong/pseudocong/experiments"
)

// decodeStrict decodes a manifest into a Kubernetes API type, refusing
// unknown fields: sigs.k8s.io/yaml turns the YAML into JSON and decodes
// it with the API types' own JSON tags, as the API server does, so a
// misspelt field (completionMod) is an error here rather than silently
// dropped by the cluster.
func decodeStrict(t *testing.T, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func TestStrictDecodeRefusesUnknownFields(t *testing.T) {
	var j batchv1.Job
	err := yaml.UnmarshalStrict([]byte("apiVersion: batch/v1\nkind: Job\nspec:\n  completionMod: Indexed\n"), &j)
	if err == nil || !strings.Contains(err.Error(), "completionMod") {
		t.Fatalf("a misspelt field: err = %v, want one naming it", err)
	}
}

// flagValue returns the argument after flag in args.
func flagValue(t *testing.T, args []string, flag string) string {
	t.Helper()
	i := slices.Index(args, flag)
	if i < 0 || i+1 >= len(args) {
		t.Fatalf("args %q: no %s value", args, flag)
	}
	return args[i+1]
}

// The sweep is an Indexed Job whose pods run `experiment run SPEC --shard
// $(JOB_COMPLETION_INDEX)/N` with N its completions, each into its own
// directory of the shared volume; the merge job lists exactly those N
// directories, reads the same volume and runs the same image.
func TestKubernetesSweepAndMerge(t *testing.T) {
	var pvc corev1.PersistentVolumeClaim
	decodeStrict(t, filepath.Join("k8s", "results-pvc.yaml"), &pvc)
	var sweep, merge batchv1.Job
	decodeStrict(t, filepath.Join("k8s", "sweep-job.yaml"), &sweep)
	decodeStrict(t, filepath.Join("k8s", "merge-job.yaml"), &merge)

	if pvc.Kind != "PersistentVolumeClaim" || !slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteMany) {
		t.Errorf("results-pvc.yaml: kind %q, access modes %v: want a ReadWriteMany claim (shards run on many nodes)", pvc.Kind, pvc.Spec.AccessModes)
	}
	for name, j := range map[string]*batchv1.Job{"sweep-job.yaml": &sweep, "merge-job.yaml": &merge} {
		if j.APIVersion != "batch/v1" || j.Kind != "Job" {
			t.Errorf("%s: %s %s, want batch/v1 Job", name, j.APIVersion, j.Kind)
		}
		pod := j.Spec.Template.Spec
		if pod.RestartPolicy != corev1.RestartPolicyNever {
			t.Errorf("%s: restartPolicy %q, want Never (a failed shard is retried by the Job, as a new pod)", name, pod.RestartPolicy)
		}
		if len(pod.Containers) != 1 || len(pod.Volumes) != 1 || pod.Volumes[0].PersistentVolumeClaim == nil ||
			pod.Volumes[0].PersistentVolumeClaim.ClaimName != pvc.Name {
			t.Fatalf("%s: want one container and the volume of claim %s", name, pvc.Name)
		}
		if c := pod.Containers[0]; len(c.VolumeMounts) != 1 || c.VolumeMounts[0].Name != pod.Volumes[0].Name {
			t.Errorf("%s: the container must mount volume %s", name, pod.Volumes[0].Name)
		}
	}

	spec := sweep.Spec
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		t.Fatalf("sweep: completionMode %v, want Indexed (it gives each pod JOB_COMPLETION_INDEX)", spec.CompletionMode)
	}
	if spec.Completions == nil || *spec.Completions < 1 {
		t.Fatal("sweep: completions must be set: it is the number of shards")
	}
	n := int(*spec.Completions)
	if spec.Parallelism != nil && int(*spec.Parallelism) > n {
		t.Errorf("sweep: parallelism %d > completions %d", *spec.Parallelism, n)
	}
	sc := spec.Template.Spec.Containers[0]
	args := append(slices.Clone(sc.Command), sc.Args...)
	if len(args) < 4 || !slices.Equal(args[:3], []string{"pseudocong", "experiment", "run"}) {
		t.Fatalf("sweep: command %q, want pseudocong experiment run SPEC ...", args)
	}
	if got, want := flagValue(t, args, "--shard"), "$(JOB_COMPLETION_INDEX)/"+strconv.Itoa(n); got != want {
		t.Errorf("sweep: --shard %q, want %q (n must equal completions)", got, want)
	}
	out := flagValue(t, args, "--out")
	if !strings.Contains(out, "$(JOB_COMPLETION_INDEX)") || !strings.HasPrefix(out, sc.VolumeMounts[0].MountPath+"/") {
		t.Errorf("sweep: --out %q: want a directory per index on the shared volume (%s)", out, sc.VolumeMounts[0].MountPath)
	}
	s, err := experiments.LoadSpec(args[3])
	if err != nil {
		t.Fatalf("sweep: %v", err)
	}
	if err := experiments.CheckInputs(s, experiments.Options{Shard: &experiments.Shard{Index: n - 1, Count: n}}); err != nil {
		t.Errorf("sweep: %v", err)
	}

	mc := merge.Spec.Template.Spec.Containers[0]
	margs := append(slices.Clone(mc.Command), mc.Args...)
	if len(margs) < 3 || !slices.Equal(margs[:3], []string{"pseudocong", "experiment", "merge"}) {
		t.Fatalf("merge: command %q, want pseudocong experiment merge ...", margs)
	}
	if mc.Image != sc.Image {
		t.Errorf("merge image %s, sweep image %s: shard.json is read by the binary that wrote it", mc.Image, sc.Image)
	}
	if mc.VolumeMounts[0].MountPath != sc.VolumeMounts[0].MountPath {
		t.Errorf("merge mounts the results at %s, the sweep at %s", mc.VolumeMounts[0].MountPath, sc.VolumeMounts[0].MountPath)
	}
	var dirs []string
	for i := 3; i < len(margs); i++ {
		if margs[i] == "--out" {
			i++
			continue
		}
		dirs = append(dirs, margs[i])
	}
	var want []string
	for i := range n {
		want = append(want, strings.ReplaceAll(out, "$(JOB_COMPLETION_INDEX)", fmt.Sprint(i)))
	}
	if !slices.Equal(dirs, want) {
		t.Errorf("merge reads %q, want every shard directory of the sweep %q", dirs, want)
	}
	if mout := flagValue(t, margs, "--out"); slices.Contains(want, mout) || !strings.HasPrefix(mout, mc.VolumeMounts[0].MountPath+"/") {
		t.Errorf("merge --out %q: want a directory of its own on the shared volume", mout)
	}
}

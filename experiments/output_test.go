package experiments

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// smallRun is a result with every kind of output (Packet-In CSVs and the
// controller CSV, RTT figures and histograms), quick to simulate.
var smallRun = sync.OnceValues(func() (*Result, error) {
	spec, err := LoadSpec("smoke")
	if err != nil {
		return nil, err
	}
	return Execute(context.Background(), spec, Options{})
})

func smallResult(t *testing.T) *Result {
	t.Helper()
	res, err := smallRun()
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// fault makes the k-th created file (1-based) fail: at its creation, after
// `after` bytes written (a disk that fills up: the bytes before it reach
// the file, then ENOSPC), at its sync or at its close.
type fault struct {
	k     int
	at    string // "create", "write", "sync", "close"
	after int
	n     int
}

func (f *fault) create(path string) (outputFile, error) {
	f.n++
	if f.n != f.k {
		return createOSFile(path)
	}
	if f.at == "create" {
		return nil, &fs.PathError{Op: "open", Path: path, Err: syscall.ENOSPC}
	}
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	return &faultyFile{File: file, at: f.at, left: f.after}, nil
}

type faultyFile struct {
	*os.File
	at   string
	left int
}

func (f *faultyFile) Write(b []byte) (int, error) {
	if f.at != "write" || len(b) <= f.left {
		f.left -= len(b)
		return f.File.Write(b)
	}
	n, _ := f.File.Write(b[:f.left])
	f.left = 0
	return n, &fs.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
}

func (f *faultyFile) Sync() error {
	if f.at == "sync" {
		return &fs.PathError{Op: "sync", Path: f.Name(), Err: syscall.EIO}
	}
	return f.File.Sync()
}

func (f *faultyFile) Close() error {
	err := f.File.Close()
	if f.at == "close" {
		return &fs.PathError{Op: "close", Path: f.Name(), Err: syscall.ENOSPC}
	}
	return err
}

// listing is the sorted names in dir (nil if dir does not exist).
func listing(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// snapshot is every file of dir with its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range listing(t, dir) {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.IsDir() {
			out[name] = "<dir>"
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = string(b)
	}
	return out
}

// A successful write leaves exactly the files it reports, complete, and
// nothing else next to the destination (no staging directory).
func TestWriteOutputsLeavesTheFullSet(t *testing.T) {
	res := smallResult(t)
	parent := t.TempDir()
	dest := filepath.Join(parent, "results")
	files, err := WriteOutputs(dest, res)
	if err != nil {
		t.Fatal(err)
	}
	got := listing(t, dest)
	want := slices.Sorted(slices.Values(files))
	if !slices.Equal(got, want) {
		t.Errorf("destination holds %v, WriteOutputs reported %v", got, want)
	}
	for _, f := range []string{SummaryFile, ReportFile, "table1.csv", "table1_controller.csv", "handshake.csv", "data.csv", "table1.png", "handshake_L500_rtt.png", "handshake_L500_hist.png"} {
		fi, err := os.Stat(filepath.Join(dest, f))
		if err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v, size %d", f, err, sizeOf(fi))
		}
	}
	if l := listing(t, parent); !slices.Equal(l, []string{"results"}) {
		t.Errorf("parent holds %v, want only results", l)
	}
}

func sizeOf(fi fs.FileInfo) int64 {
	if fi == nil {
		return -1
	}
	return fi.Size()
}

// A write that fails anywhere (first, middle or last file; at create,
// mid-write with a full disk, sync or close) leaves no partial run: a new
// destination stays absent, a previous run stays as it was, and the
// staging directory is gone. Before the staging directory, summary.json
// was written first and stayed beside truncated or missing CSVs and PNGs.
func TestWriteOutputsFailureLeavesNoPartialRun(t *testing.T) {
	res := smallResult(t)
	// How many files a run has, to fail the first, a middle and the last.
	probe := filepath.Join(t.TempDir(), "probe")
	all, err := WriteOutputs(probe, res)
	if err != nil {
		t.Fatal(err)
	}
	n := len(all)
	if n < 8 {
		t.Fatalf("only %d output files: %v", n, all)
	}
	faults := []fault{
		{k: 1, at: "create"},
		{k: 1, at: "write", after: 10},
		{k: 2, at: "write", after: 0},
		{k: n / 2, at: "write", after: 100},
		{k: n - 1, at: "sync"},
		{k: n, at: "close"},
		{k: n, at: "write", after: 1},
	}
	for _, previous := range []bool{false, true} {
		for _, f := range faults {
			t.Run(fmt.Sprintf("previous=%v/file%d/%s", previous, f.k, f.at), func(t *testing.T) {
				parent := t.TempDir()
				dest := filepath.Join(parent, "results")
				var before map[string]string
				if previous {
					if _, err := WriteOutputs(dest, res); err != nil {
						t.Fatal(err)
					}
					// Mark the previous run so that a replacement would show.
					if err := os.WriteFile(filepath.Join(dest, SummaryFile), []byte(`{"previous": true}`+"\n"), 0o644); err != nil {
						t.Fatal(err)
					}
					before = snapshot(t, dest)
				}
				f := f
				files, err := writeOutputs(dest, res, f.create)
				if err == nil {
					t.Fatalf("no error (files %v)", files)
				}
				if f.at != "sync" && !errors.Is(err, syscall.ENOSPC) || f.at == "sync" && !errors.Is(err, syscall.EIO) {
					t.Errorf("error %v does not carry the injected one", err)
				}
				if previous {
					if after := snapshot(t, dest); !mapsEqual(before, after) {
						t.Errorf("previous run changed: had %d files, now %v", len(before), listing(t, dest))
					}
				} else if l := listing(t, dest); l != nil {
					t.Errorf("failed run left %v in the destination", l)
				}
				want := []string(nil)
				if previous {
					want = []string{"results"}
				}
				if l := listing(t, parent); !slices.Equal(l, want) {
					t.Errorf("parent holds %v, want %v (no staging directory)", l, want)
				}
			})
		}
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// --out naming a previous run replaces it as a whole: none of its files
// survive beside the new run's, and an existing empty directory (as
// t.TempDir or mkdir gives) is used, keeping its permissions.
func TestWriteOutputsReplacesPreviousRun(t *testing.T) {
	res := smallResult(t)
	parent := t.TempDir()
	dest := filepath.Join(parent, "results")
	if _, err := WriteOutputs(dest, res); err != nil {
		t.Fatal(err)
	}
	// A previous run of another spec: one more experiment.
	if err := os.WriteFile(filepath.Join(dest, "fig5.csv"), []byte("stale\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := WriteOutputs(dest, res)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := listing(t, dest), slices.Sorted(slices.Values(files)); !slices.Equal(got, want) {
		t.Errorf("after replacing: %v, want %v", got, want)
	}
	if l := listing(t, parent); !slices.Equal(l, []string{"results"}) {
		t.Errorf("parent holds %v", l)
	}

	empty := filepath.Join(parent, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(empty, 0o750); err != nil { // whatever the umask
		t.Fatal(err)
	}
	if _, err := WriteOutputs(empty, res); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(empty, SummaryFile)); err != nil || fi.Size() == 0 {
		t.Errorf("empty directory: %v", err)
	}
	if fi, _ := os.Stat(empty); fi.Mode().Perm() != 0o750 {
		t.Errorf("mode %v, want the directory's 0750", fi.Mode().Perm())
	}

	// Through a symlink: the link stays, its target gets the run.
	target := filepath.Join(parent, "target")
	link := filepath.Join(parent, "link")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteOutputs(link, res); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("symlink replaced: %v, %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(target, SummaryFile)); err != nil {
		t.Errorf("target: %v", err)
	}
}

// A destination that is not ours to replace is refused before anything is
// written, and left as it was.
func TestWriteOutputsRefusesForeignDestination(t *testing.T) {
	res := smallResult(t)
	parent := t.TempDir()
	mk := func(name string, files map[string]string, dirs ...string) string {
		d := filepath.Join(parent, name)
		for _, sub := range append([]string{""}, dirs...) {
			if err := os.MkdirAll(filepath.Join(d, sub), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for f, body := range files {
			if err := os.WriteFile(filepath.Join(d, f), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	file := filepath.Join(parent, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, dir, want string
	}{
		{"a file", file, "not a directory"},
		{"other files", mk("home", map[string]string{"notes.txt": "mine", SummaryFile: "{}"}), "holds notes.txt"},
		{"a subdirectory", mk("tree", map[string]string{SummaryFile: "{}"}, "src"), "holds src"},
		{"outputs without a summary", mk("csvs", map[string]string{"data.csv": "1,2"}), "holds no summary.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before map[string]string
			if fi, err := os.Stat(tc.dir); err == nil && fi.IsDir() {
				before = snapshot(t, tc.dir)
			}
			for _, check := range []func() error{
				func() error { return CheckOutputDir(tc.dir) },
				func() error { _, err := WriteOutputs(tc.dir, res); return err },
			} {
				if err := check(); err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("error %v, want one containing %q", err, tc.want)
				}
			}
			if before != nil && !mapsEqual(before, snapshot(t, tc.dir)) {
				t.Errorf("destination changed")
			}
		})
	}
	for _, e := range listing(t, parent) {
		if strings.HasPrefix(e, ".") {
			t.Errorf("staging directory %s left behind", e)
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckOutputDir("."); err == nil || !strings.Contains(err.Error(), "current directory") {
		t.Errorf("--out . (%s): %v", wd, err)
	}
}

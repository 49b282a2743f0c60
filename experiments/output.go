package experiments

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"gonum.org/v1/plot"
)

// Output files in the --out directory.
const (
	SummaryFile = "summary.json"
	ReportFile  = "report.md"
)

// A run's outputs appear all at once or not at all. WriteOutputs writes
// every file into a hidden staging directory next to the destination
// (same parent, so the same file system), syncs each file and the
// directory, and only then renames it into place. A write that fails (a
// full disk) removes the staging directory and leaves the destination as
// it was: there is never a summary.json beside truncated CSVs or figures.
//
// The destination may already exist:
//   - absent, or an empty directory: the new run takes its place;
//   - a previous run's outputs (it holds summary.json and only output
//     files: *.json, *.csv, *.png, *.md): they are replaced as a whole.
//     The old directory is renamed into the staging directory, the new one
//     renamed in, then the old one removed, so no file of the previous run
//     survives beside the new one. Between the two renames (microseconds)
//     the destination is absent; if the process dies right then, the old
//     run is in the hidden .NAME.pseudocong-* directory beside it.
//   - anything else (a file, a directory with other files or
//     subdirectories, the current directory): refused, nothing is written,
//     since replacing it would delete files that are not ours.
//
// A run killed while writing leaves only a hidden .NAME.pseudocong-*
// directory next to the destination, which is safe to delete.

// stagingPrefix starts the name of the staging directory of dest.
func stagingPrefix(dest string) string { return "." + filepath.Base(dest) + ".pseudocong-" }

// outputFile is one file being written; *os.File is one.
type outputFile interface {
	io.Writer
	Sync() error
	Close() error
}

// createFunc creates a new file for writing. It is the seam through which
// tests make a write fail (disk full after N bytes, on the k-th file).
type createFunc func(path string) (outputFile, error)

func createOSFile(path string) (outputFile, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
}

// WriteOutputs writes everything a run produces into dir, atomically (see
// above): summary.json, one CSV per experiment (plus the controller delays
// of Packet-In experiments), the figures as PNG, and report.md. It returns
// the files written, relative to dir.
func WriteOutputs(dir string, r *Result) ([]string, error) {
	return writeOutputs(dir, r, createOSFile)
}

// CheckOutputDir reports whether dir can receive a run's outputs: absent,
// an empty directory or a previous run's outputs. A caller checks it
// before a long run; WriteOutputs checks again when it commits.
func CheckOutputDir(dir string) error {
	_, _, err := resolveOutputDir(dir)
	return err
}

// resolveOutputDir returns the absolute destination (a symlink to a
// directory is followed, so the link stays and its target is replaced)
// and whether it exists.
func resolveOutputDir(dir string) (dest string, exists bool, err error) {
	dest, err = filepath.Abs(dir)
	if err != nil {
		return "", false, fmt.Errorf("output directory %s: %w", dir, err)
	}
	if real, err := filepath.EvalSymlinks(dest); err == nil {
		dest = real
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", false, fmt.Errorf("output directory %s: %w", dir, err)
	}
	fi, err := os.Stat(dest)
	if errors.Is(err, fs.ErrNotExist) {
		return dest, false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("output directory %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return "", false, fmt.Errorf("output directory %s: exists and is not a directory", dir)
	}
	if dest == filepath.Dir(dest) {
		return "", false, fmt.Errorf("output directory %s: the root directory cannot be replaced", dir)
	}
	if wd, err := os.Getwd(); err == nil {
		if rwd, err := filepath.EvalSymlinks(wd); err == nil && rwd == dest {
			return "", false, fmt.Errorf("output directory %s: is the current directory; give a subdirectory (e.g. results)", dir)
		}
	}
	entries, err := os.ReadDir(dest)
	if err != nil {
		return "", false, fmt.Errorf("output directory %s: %w", dir, err)
	}
	if len(entries) == 0 {
		return dest, true, nil
	}
	hasSummary := false
	for _, e := range entries {
		if !e.Type().IsRegular() || !isOutputName(e.Name()) {
			return "", false, fmt.Errorf("output directory %s: holds %s, which is not a run output; give a new or empty directory, or one holding only a previous run", dir, e.Name())
		}
		// A shard's output (shard.json) is a previous run too.
		hasSummary = hasSummary || e.Name() == SummaryFile || e.Name() == ShardFile
	}
	if !hasSummary {
		return "", false, fmt.Errorf("output directory %s: not empty and holds no %s or %s, so it is not a previous run; give a new or empty directory", dir, SummaryFile, ShardFile)
	}
	return dest, true, nil
}

// isOutputName reports whether name could be a file WriteOutputs writes.
func isOutputName(name string) bool {
	return slices.Contains([]string{".json", ".csv", ".png", ".md"}, filepath.Ext(name))
}

func writeOutputs(dir string, r *Result, create createFunc) ([]string, error) {
	return writeDir(dir, func(tmp string) ([]string, error) { return writeFiles(tmp, r, create) })
}

// writeDir fills a fresh staging directory with fill and renames it to dir
// (see above). Shard outputs (WriteShard) are written the same way.
func writeDir(dir string, fill func(tmp string) ([]string, error)) (files []string, err error) {
	dest, _, err := resolveOutputDir(dir)
	if err != nil {
		return nil, err
	}
	parent := filepath.Dir(dest)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	stage, err := os.MkdirTemp(parent, stagingPrefix(dest))
	if err != nil {
		return nil, fmt.Errorf("output directory: staging: %w", err)
	}
	// Whatever happens from here, the staging directory goes away: after
	// a failure with the partial run in it, after success with the
	// previous run (or nothing) in it.
	defer func() {
		if rerr := os.RemoveAll(stage); rerr != nil && err == nil {
			err = fmt.Errorf("output directory: removing staging %s: %w", stage, rerr)
		}
	}()
	tmp := filepath.Join(stage, "new")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return nil, fmt.Errorf("output directory: staging: %w", err)
	}
	files, err = fill(tmp)
	if err != nil {
		return nil, err
	}
	if err := syncDir(tmp); err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	if err := commit(tmp, dest, filepath.Join(stage, "old")); err != nil {
		return nil, err
	}
	if err := syncDir(parent); err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	return files, nil
}

// commit renames the finished run tmp to dest. A dest that exists (checked
// again here: the run may have taken minutes) is first renamed to old,
// and put back if the second rename fails.
func commit(tmp, dest, old string) error {
	_, exists, err := resolveOutputDir(dest)
	if err != nil {
		return err
	}
	if exists {
		// Keep the permissions of the directory the user made.
		if fi, err := os.Stat(dest); err == nil {
			if err := os.Chmod(tmp, fi.Mode().Perm()); err != nil {
				return fmt.Errorf("output directory: %w", err)
			}
		}
		if err := os.Rename(dest, old); err != nil {
			return fmt.Errorf("output directory: moving the previous run away: %w", err)
		}
	}
	if err := os.Rename(tmp, dest); err != nil {
		if exists {
			if rerr := os.Rename(old, dest); rerr != nil {
				return fmt.Errorf("output directory: %w (and restoring the previous run from %s: %v)", err, old, rerr)
			}
		}
		return fmt.Errorf("output directory: %w", err)
	}
	return nil
}

// writeFiles writes every output of r into dir (a fresh directory) and
// returns their names in order.
func writeFiles(dir string, r *Result, create createFunc) ([]string, error) {
	var files []string
	write := func(name string, wt io.WriterTo) error {
		if err := writeFile(create, filepath.Join(dir, name), wt); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		files = append(files, name)
		return nil
	}
	sum, err := MarshalSummary(r.Summary())
	if err != nil {
		return nil, fmt.Errorf("summary: %w", err)
	}
	if err := write(SummaryFile, bytes.NewReader(sum)); err != nil {
		return nil, err
	}
	for _, e := range r.Spec.Runs {
		var b bytes.Buffer
		if err := WriteCSV(&b, r, e.ID); err != nil {
			return nil, fmt.Errorf("csv %s: %w", e.ID, err)
		}
		if err := write(csvName(e.ID), &b); err != nil {
			return nil, err
		}
		if e.Kind == KindPacketIn {
			var b bytes.Buffer
			if err := WriteControllerCSV(&b, r, e.ID); err != nil {
				return nil, fmt.Errorf("csv %s: %w", e.ID, err)
			}
			if err := write(e.ID+"_controller.csv", &b); err != nil {
				return nil, err
			}
		}
	}
	type figure struct {
		name string
		p    *plot.Plot
		png  bytes.Buffer
		err  error
	}
	var figs []*figure
	if err := drawFigures(r, func(p *plot.Plot, name string) error {
		figs = append(figs, &figure{name: name, p: p})
		return nil
	}); err != nil {
		return nil, err
	}
	// Rendering is most of the output time and each figure is
	// independent: render them on every CPU, write them in order.
	jobs := make(chan *figure)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(figs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range jobs {
				wt, err := renderPNG(f.p)
				if err == nil {
					_, err = wt.WriteTo(&f.png)
				}
				f.err = err
			}
		}()
	}
	for _, f := range figs {
		jobs <- f
	}
	close(jobs)
	wg.Wait()
	for _, f := range figs {
		if f.err != nil {
			return nil, fmt.Errorf("figure %s: %w", f.name, f.err)
		}
		if err := write(f.name, &f.png); err != nil {
			return nil, err
		}
	}
	if err := seriesFiles(r, write); err != nil {
		return nil, err
	}
	var rep bytes.Buffer
	if err := WriteReport(&rep, r, append(slices.Clone(files), ReportFile)); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	if err := write(ReportFile, &rep); err != nil {
		return nil, err
	}
	return files, nil
}

// writeFile creates path, writes wt into it and syncs it: a file counts as
// written only once its bytes are on disk and it is closed.
func writeFile(create createFunc, path string, wt io.WriterTo) error {
	f, err := create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	_, err = wt.WriteTo(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncDir makes the names in dir durable (its entries, after files were
// created or renamed in it).
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

package experiments

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkPaperSpec runs the whole built-in paper spec on the sim backend
// and writes its outputs (summary, CSVs, figures, report): what `make run`
// does. The budget is 60 s on the project's 2-core machine.
func BenchmarkPaperSpec(b *testing.B) {
	spec, err := LoadSpec("paper")
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	for b.Loop() {
		res, err := Execute(context.Background(), spec, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := WriteOutputs(filepath.Join(dir, "out"), res); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(res.Wall.Seconds(), "sim-s/op")
	}
	_ = os.RemoveAll(dir)
}

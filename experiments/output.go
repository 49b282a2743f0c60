package experiments

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// Output files in the --out directory.
const (
	SummaryFile = "summary.json"
	ReportFile  = "report.md"
)

// WriteOutputs writes everything a run produces into dir (created if
// needed): summary.json, one CSV per experiment (plus the controller delays
// of Packet-In experiments), the figures as PNG, and report.md. It returns
// the files written, relative to dir.
func WriteOutputs(dir string, r *Result) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	var files []string
	write := func(name string, data []byte) error {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		files = append(files, name)
		return nil
	}
	sum, err := MarshalSummary(r.Summary())
	if err != nil {
		return nil, fmt.Errorf("summary: %w", err)
	}
	if err := write(SummaryFile, sum); err != nil {
		return nil, err
	}
	for _, e := range r.Spec.Runs {
		var b bytes.Buffer
		if err := WriteCSV(&b, r, e.ID); err != nil {
			return nil, fmt.Errorf("csv %s: %w", e.ID, err)
		}
		if err := write(csvName(e.ID), b.Bytes()); err != nil {
			return nil, err
		}
		if e.Kind == KindPacketIn {
			b.Reset()
			if err := WriteControllerCSV(&b, r, e.ID); err != nil {
				return nil, fmt.Errorf("csv %s: %w", e.ID, err)
			}
			if err := write(e.ID+"_controller.csv", b.Bytes()); err != nil {
				return nil, err
			}
		}
	}
	figs, err := WriteFigures(dir, r)
	files = append(files, figs...)
	if err != nil {
		return files, err
	}
	var rep bytes.Buffer
	if err := WriteReport(&rep, r, append(files, ReportFile)); err != nil {
		return files, err
	}
	if err := write(ReportFile, rep.Bytes()); err != nil {
		return files, err
	}
	return files, nil
}

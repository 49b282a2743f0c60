package grid

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/pseudocong/pseudocong/experiments"
)

// Summary is a grid's summary.json in the shape of the other specs'
// (experiments.Summary): backend sim, the wall time in whole
// milliseconds, every value rounded to 1e-9 so that the text never
// depends on the last bits of a float computation.
func Summary(b *Base, profile string, wall time.Duration, values map[string]float64) experiments.Summary {
	s := experiments.Summary{
		Spec: b.Name, Backend: "sim", Profile: profile, Seed: b.Seed,
		WallSeconds: float64(wall.Milliseconds()) / 1000,
		Results:     map[string]any{}, Paper: map[string]any{},
	}
	for k, v := range values {
		s.Results[k] = float64(int64(v*1e9+0.5)) / 1e9
	}
	return s
}

// Output is what a grid writes into its output directory.
type Output struct {
	// What prefixes errors: "mptcp grid".
	What    string
	Summary experiments.Summary
	// CSV is cells.csv: the header, then a row per run.
	CSV [][]string
	// Figures, if set, writes the figures into the directory.
	Figures func(dir string) error
}

// Write writes summary.json, cells.csv and the figures into dir.
func (o *Output) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%s: %w", o.What, err)
	}
	b, err := experiments.MarshalSummary(o.Summary)
	if err != nil {
		return fmt.Errorf("%s: summary: %w", o.What, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), b, 0o644); err != nil {
		return fmt.Errorf("%s: %w", o.What, err)
	}
	if err := o.writeCSV(filepath.Join(dir, "cells.csv")); err != nil {
		return err
	}
	if o.Figures == nil {
		return nil
	}
	return o.Figures(dir)
}

func (o *Output) writeCSV(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("%s: %w", o.What, err)
	}
	w := csv.NewWriter(f)
	_ = w.WriteAll(o.CSV) // its error is w.Error's
	if err := w.Error(); err != nil {
		f.Close()
		return fmt.Errorf("%s: %s: %w", o.What, path, err)
	}
	return f.Close()
}

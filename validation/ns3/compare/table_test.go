package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// readTable reads back what main prints: ns-3's side of each row, keyed
// by the cell's name, and refuses rows it cannot read.
func TestReadTable(t *testing.T) {
	dir := t.TempDir()
	c := cell{2, "cubic", 10, 80 * time.Millisecond, true}
	good := filepath.Join(dir, "good.md")
	table := "| cell | goodput₀ | util | Jain | retrans | events | wall | outside |\n|---|---|---|---|---|---|---|---|\n" +
		"| " + c.String() + " | 5.02 / 4.41 | 0.947 / 0.938 | 0.997 / 0.996 | 0 / 81 | 170629 / 411700 | 0.037 / 1.627 | retrans |\n"
	if err := os.WriteFile(good, []byte(table), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, err := readTable(good)
	if err != nil {
		t.Fatal(err)
	}
	r := rows[c.String()]
	if r == nil || len(rows) != 1 {
		t.Fatalf("rows %v: want one, for %q", rows, c)
	}
	if r.Flows[0].GoodputMbps != 4.41 || r.Utilisation != 0.938 || r.Jain != 0.996 || retrans(r.Flows) != 81 || r.Events != 411700 || r.WallS != 1.627 {
		t.Fatalf("row %+v: want ns-3's side 4.41, 0.938, 0.996, 81, 411700, 1.627", r)
	}
	bad := filepath.Join(dir, "bad.md")
	if err := os.WriteFile(bad, []byte("| "+c.String()+" | 5.02 | 0.947 / 0.938 | 0.997 / 0.996 | 0 / 81 | 1 / 2 | 0 / 1 | |\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readTable(bad); err == nil {
		t.Fatal("a column without ours / ns-3 was accepted")
	}
	if _, err := readTable(filepath.Join(dir, "none.md")); err == nil {
		t.Fatal("a missing file was accepted")
	}
}

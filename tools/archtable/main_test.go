package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommittedTableIsCurrent is what keeps docs/architecture.md honest:
// CI runs the unit tests, so a package added, renamed, re-documented or
// given a new import without regenerating the table fails here.
func TestCommittedTableIsCurrent(t *testing.T) {
	root, modPath, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	pkgs, err := listPackages(root)
	if err != nil {
		t.Fatal(err)
	}
	table, err := Table(modPath, pkgs)
	if err != nil {
		t.Fatalf("%v\n(every package needs a package comment whose first sentence is its one job)", err)
	}
	doc, err := os.ReadFile(filepath.Join(root, docPath))
	if err != nil {
		t.Fatal(err)
	}
	want, err := Replace(doc, table)
	if err != nil {
		t.Fatalf("%s: %v", docPath, err)
	}
	if string(want) != string(doc) {
		t.Errorf("%s: the package table differs from the code: run go run ./tools/archtable\n\ngenerated table:\n%s", docPath, table)
	}
	// Every package of the module has its row.
	for _, p := range pkgs {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, modPath), "/")
		if !strings.Contains(table, "| `"+rel+"` |") {
			t.Errorf("package %s has no row in the table", rel)
		}
	}
}

func TestTable(t *testing.T) {
	const mod = "example.com/m"
	pkgs := []pkg{
		{ImportPath: mod + "/b", Name: "b", Doc: "Package b uses a | and c.", Imports: []string{"fmt", mod + "/c", mod + "/a"}},
		{ImportPath: mod + "/a", Name: "a", Doc: "Package a is a leaf."},
		{ImportPath: mod + "/c", Name: "c", Doc: "Package c needs a.", Imports: []string{mod + "/a"}},
		{ImportPath: mod + "/cmd/tool", Name: "main", Doc: "Command tool runs b.", Imports: []string{mod + "/b"}},
	}
	got, err := Table(mod, pkgs)
	if err != nil {
		t.Fatal(err)
	}
	want := "| package | job | imports of the project (non-test) |\n|---|---|---|\n" +
		"| `a` | is a leaf | none |\n" +
		"| `c` | needs a | `a` |\n" +
		"| `b` | uses a \\| and c | `a`, `c` |\n" +
		"| `cmd/tool` | runs b | `b` |\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	pkgs = append(pkgs, pkg{ImportPath: mod + "/nodoc", Name: "nodoc"})
	if _, err := Table(mod, pkgs); err == nil || !strings.Contains(err.Error(), "nodoc: no package comment") {
		t.Errorf("a package without a comment: err = %v, want one naming it", err)
	}
}

func TestReplace(t *testing.T) {
	doc := "# T\n\n" + startMarker + "\nold\nrows\n" + endMarker + "\n\nprose\n"
	got, err := Replace([]byte(doc), "| new |\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := "# T\n\n" + startMarker + "\n| new |\n" + endMarker + "\n\nprose\n"; string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, bad := range []string{
		"no markers\n",
		endMarker + "\n" + startMarker + "\n",
		startMarker + "\n" + endMarker + "\n" + startMarker + "\n" + endMarker + "\n",
	} {
		if _, err := Replace([]byte(bad), "x\n"); err == nil {
			t.Errorf("Replace(%q): no error", bad)
		}
	}
}

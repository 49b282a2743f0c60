// Command archtable writes the package table of docs/architecture.md from
// the code, so that the table cannot drift from it.
//
// Every package of the module gets one row: its path, its one job (the
// first sentence of its package comment, as `go doc` shows it) and the
// module's own packages it imports (test files excluded). Rows go leaves
// first: a package comes after everything it imports, ties by path. The
// table replaces whatever stands between the lines
//
//	<!-- archtable:start -->
//	<!-- archtable:end -->
//
// in docs/architecture.md. A package without a package comment is an
// error: the table has no job to show for it.
//
//	go run ./tools/archtable          # rewrite docs/architecture.md
//	go run ./tools/archtable -check   # exit 1 if it is stale
//
// The unit test of this package fails when the committed table differs
// from the generated one, and CI runs the unit tests.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Markers delimit the generated table in the document.
const (
	startMarker = "<!-- archtable:start -->"
	endMarker   = "<!-- archtable:end -->"
)

// docPath is the document the table lives in, relative to the module root.
const docPath = "docs/architecture.md"

// pkg is the part of `go list -json` this command reads.
type pkg struct {
	ImportPath string
	Name       string
	Doc        string // the package comment's first sentence (go/doc's synopsis)
	Imports    []string
	Module     *struct{ Path, Dir string }
}

func main() {
	check := flag.Bool("check", false, "do not write; exit 1 if "+docPath+" is stale")
	flag.Parse()
	if err := run(*check, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "archtable:", err)
		os.Exit(1)
	}
}

func run(check bool, w io.Writer) error {
	root, modPath, err := moduleRoot()
	if err != nil {
		return err
	}
	pkgs, err := listPackages(root)
	if err != nil {
		return err
	}
	table, err := Table(modPath, pkgs)
	if err != nil {
		return err
	}
	path := filepath.Join(root, docPath)
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	updated, err := Replace(old, table)
	if err != nil {
		return fmt.Errorf("%s: %w", docPath, err)
	}
	if bytes.Equal(old, updated) {
		fmt.Fprintf(w, "%s: table up to date (%d packages)\n", docPath, len(pkgs))
		return nil
	}
	if check {
		return fmt.Errorf("%s: package table is stale: run go run ./tools/archtable", docPath)
	}
	if err := os.WriteFile(path, updated, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: table rewritten (%d packages)\n", docPath, len(pkgs))
	return nil
}

// moduleRoot returns the directory and path of the main module, from
// wherever in it the command runs (the test runs in tools/archtable).
func moduleRoot() (dir, path string, err error) {
	out, err := goCmd("", "list", "-m", "-json")
	if err != nil {
		return "", "", err
	}
	var m struct{ Path, Dir string }
	if err := json.Unmarshal(out, &m); err != nil {
		return "", "", fmt.Errorf("go list -m -json: %w", err)
	}
	if m.Dir == "" || m.Path == "" {
		return "", "", errors.New("go list -m -json: no main module")
	}
	return m.Dir, m.Path, nil
}

// listPackages runs `go list -json ./...` in the module root. `go list`
// rather than golang.org/x/tools/go/packages: it is what the toolchain
// itself answers, and needs no dependency.
func listPackages(root string) ([]pkg, error) {
	// -pgo=off: with cmd/pseudocong/default.pgo, go list names the
	// binary's imports by their profile-specialised variants
	// ("tcp [github.com/pseudocong/pseudocong/cmd/pseudocong]").
	out, err := goCmd(root, "list", "-pgo=off", "-json", "./...")
	if err != nil {
		return nil, err
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list -json: %w", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

func goCmd(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

// Table renders the Markdown table of pkgs, the packages of module
// modPath. Every package must have a package comment.
func Table(modPath string, pkgs []pkg) (string, error) {
	rel := func(ip string) (string, bool) {
		if ip == modPath {
			return ".", true
		}
		r, ok := strings.CutPrefix(ip, modPath+"/")
		return r, ok
	}
	type row struct {
		path, job string
		imports   []string
	}
	rows := map[string]*row{}
	var errs []error
	for _, p := range pkgs {
		path, ok := rel(p.ImportPath)
		if !ok {
			continue
		}
		job, err := jobOf(p)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", path, err))
		}
		r := &row{path: path, job: job}
		for _, imp := range p.Imports {
			if ip, ok := rel(imp); ok {
				r.imports = append(r.imports, ip)
			}
		}
		slices.Sort(r.imports)
		rows[path] = r
	}
	if err := errors.Join(errs...); err != nil {
		return "", err
	}
	// Depth: 0 for a package importing none of the module, else one more
	// than its deepest import. Go forbids import cycles, so this ends.
	depth := map[string]int{}
	var depthOf func(string) int
	depthOf = func(p string) int {
		if d, ok := depth[p]; ok {
			return d
		}
		d := 0
		if r := rows[p]; r != nil {
			for _, imp := range r.imports {
				d = max(d, depthOf(imp)+1)
			}
		}
		depth[p] = d
		return d
	}
	var order []*row
	for _, r := range rows {
		depthOf(r.path)
		order = append(order, r)
	}
	slices.SortFunc(order, func(a, b *row) int {
		if d := depth[a.path] - depth[b.path]; d != 0 {
			return d
		}
		return strings.Compare(a.path, b.path)
	})
	var b strings.Builder
	b.WriteString("| package | job | imports of the project (non-test) |\n|---|---|---|\n")
	for _, r := range order {
		imps := "none"
		if len(r.imports) > 0 {
			q := make([]string, len(r.imports))
			for i, s := range r.imports {
				q[i] = "`" + s + "`"
			}
			imps = strings.Join(q, ", ")
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", r.path, cell(r.job), imps)
	}
	return b.String(), nil
}

// jobOf is the package comment's first sentence without its "Package
// NAME" / "Command NAME" opening and its final period: "models the
// switch's local CPU: …".
func jobOf(p pkg) (string, error) {
	doc := strings.TrimSpace(p.Doc)
	if doc == "" {
		return "", errors.New("no package comment: add one (a doc.go) whose first sentence is the package's one job")
	}
	name := p.Name
	if name == "main" {
		name = filepath.Base(p.ImportPath)
	}
	for _, opening := range []string{"Package " + p.Name + " ", "Command " + name + " "} {
		if rest, ok := strings.CutPrefix(doc, opening); ok {
			doc = rest
			break
		}
	}
	return strings.TrimSuffix(doc, "."), nil
}

// cell escapes text for a Markdown table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// Replace returns doc with the text between the markers (each on its own
// line) replaced by table.
func Replace(doc []byte, table string) ([]byte, error) {
	s := string(doc)
	i := strings.Index(s, startMarker+"\n")
	j := strings.Index(s, "\n"+endMarker)
	if i < 0 || j < 0 || j < i {
		return nil, fmt.Errorf("want the lines %q and %q around the package table", startMarker, endMarker)
	}
	if strings.Count(s, startMarker) != 1 || strings.Count(s, endMarker) != 1 {
		return nil, fmt.Errorf("the markers %q and %q must appear once each", startMarker, endMarker)
	}
	head := s[:i+len(startMarker)+1]
	tail := s[j+1:]
	return []byte(head + table + tail), nil
}

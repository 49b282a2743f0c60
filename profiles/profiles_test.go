package profiles

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pseudocong/pseudocong/profile"
)

// Every built-in profile is here, byte for byte (the files are symbolic
// links), and loads by path as --profile FILE does. Fix a failure with
// `ln -s ../profile/builtin/NAME.yaml profiles/NAME.yaml`.
func TestCopiesMatchBuiltins(t *testing.T) {
	copies, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range copies {
		// Regular files are measured profiles (TestMeasuredProfilesLoad);
		// the links are the built-ins.
		if fi, err := os.Lstat(c); err == nil && fi.Mode()&os.ModeSymlink == 0 {
			continue
		}
		names = append(names, strings.TrimSuffix(c, ".yaml"))
	}
	slices.Sort(names)
	if want := profile.Names(); !slices.Equal(names, want) {
		t.Fatalf("profiles/ holds %v, built-ins are %v", names, want)
	}
	for _, name := range names {
		mine, err := os.ReadFile(name + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		builtin, err := os.ReadFile(filepath.Join("..", "profile", "builtin", name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(mine, builtin) {
			t.Errorf("profiles/%s.yaml differs from profile/builtin/%s.yaml", name, name)
		}
		// And the copy loads as a file, as --profile FILE does.
		p, err := profile.Load("./" + name + ".yaml")
		if err != nil || p.Name != name {
			t.Errorf("loading profiles/%s.yaml: %v", name, err)
		}
	}
}

// Profiles measured by `pseudocong calibrate` live here as regular files:
// each loads as --profile FILE does, is named after its file and says how
// it was measured.
func TestMeasuredProfilesLoad(t *testing.T) {
	files, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if fi, err := os.Lstat(f); err != nil || fi.Mode()&os.ModeSymlink != 0 {
			continue
		}
		p, err := profile.Load("./" + f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if p.Name != strings.TrimSuffix(f, ".yaml") || p.Provenance == nil || p.Provenance.Tool == "" {
			t.Errorf("%s: name %q, provenance %+v: want the file's name and how it was measured", f, p.Name, p.Provenance)
		}
	}
}

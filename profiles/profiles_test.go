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

// The files here are byte-for-byte the built-in profiles: one set of
// constants, two places. Fix a failure by copying profile/builtin/NAME.yaml
// over profiles/NAME.yaml (or the other way round, then rebuild).
func TestCopiesMatchBuiltins(t *testing.T) {
	copies, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range copies {
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

package testenv

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// BuildPseudocong compiles cmd/pseudocong into the test's temp dir and
// returns the binary's path: the tests that start the switch, the
// controller or a whole experiment as child processes run this build of
// the tree, not whatever pseudocong is on PATH. By import path, so it
// works from any package directory of the module.
func BuildPseudocong(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "pseudocong")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/pseudocong/pseudocong/cmd/pseudocong").CombinedOutput()
	if err != nil {
		t.Fatalf("go build cmd/pseudocong: %v\n%s", err, out)
	}
	return bin
}

package openflow

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// requireCommand returns the path of an external peer the test needs: a
// skip on a developer's machine without it, a failure in CI (CI=true),
// where every peer is installed by scripts/install-deps.sh and a skip would
// hide a missing one. internal/testenv has the same rule, but it imports
// this package, so these tests cannot import it.
func requireCommand(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if ci := strings.ToLower(os.Getenv("CI")); ci != "" && ci != "false" && ci != "0" {
		t.Fatalf("prerequisite missing in CI: %s: %v", name, err)
	}
	t.Skipf("skipping: %s not installed", name)
	return ""
}

package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// InCI reports whether the tests run in continuous integration, where a
// missing prerequisite is an error rather than a reason to skip.
func InCI() bool {
	v := strings.ToLower(strings.TrimSpace(os.Getenv("CI")))
	return v != "" && v != "false" && v != "0"
}

// unavailable skips the test locally and fails it in CI.
func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	if InCI() {
		t.Fatalf("prerequisite missing in CI (CI=%q): "+format, append([]any{os.Getenv("CI")}, args...)...)
		return
	}
	t.Skipf("skipping: "+format, args...)
}

// RequireRoot skips (locally) or fails (CI) unless the test runs as root,
// which namespaces, veths, OVS and packet capture all need.
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		unavailable(t, "needs root (euid %d)", os.Geteuid())
	}
}

// RequireCommand skips (locally) or fails (CI) unless every named command is
// on PATH (or in /usr/sbin, /sbin, where Debian puts the OVS daemons).
func RequireCommand(t testing.TB, names ...string) {
	t.Helper()
	var missing []string
	for _, name := range names {
		if _, err := lookPath(name); err != nil {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		unavailable(t, "commands not found: %s (run scripts/install-deps.sh as root)", strings.Join(missing, " "))
	}
}

// RequireCommandPath is RequireCommand for one command, returning its path.
func RequireCommandPath(t testing.TB, name string) string {
	t.Helper()
	RequireCommand(t, name)
	p, _ := lookPath(name)
	return p
}

// lookPath finds a command on PATH, falling back to the sbin directories a
// non-login root shell may not have on PATH.
func lookPath(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin"} {
		p := dir + "/" + name
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

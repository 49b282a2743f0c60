package livetcp

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
)

const allowedCC = "/proc/sys/net/ipv4/tcp_allowed_congestion_control"

// WidenAllowedCC adds algos to the root namespace's
// tcp_allowed_congestion_control (which every namespace's unprivileged
// choice is checked against) and returns the function that writes the
// original list back. Nothing to add: a no-op restore.
func WidenAllowedCC(algos ...string) (restore func() error, err error) {
	old, err := os.ReadFile(allowedCC)
	if err != nil {
		return nil, fmt.Errorf("livetcp: %w", err)
	}
	have := strings.Fields(string(old))
	want := slices.Clone(have)
	for _, a := range algos {
		if !slices.Contains(want, a) {
			want = append(want, a)
		}
	}
	if len(want) == len(have) {
		return func() error { return nil }, nil
	}
	if err := os.WriteFile(allowedCC, []byte(strings.Join(want, " ")), 0o644); err != nil {
		return nil, fmt.Errorf("livetcp: widen %s to %q: %w", allowedCC, want, err)
	}
	orig := strings.Join(have, " ")
	return func() error {
		if err := os.WriteFile(allowedCC, []byte(orig), 0o644); err != nil {
			return fmt.Errorf("livetcp: restore %s to %q: %w", allowedCC, orig, err)
		}
		return nil
	}, nil
}

// NetnsSysctl sets a sysctl inside a named namespace (its per-netns
// copy; the namespace goes away with the testbed, so nothing to restore).
func NetnsSysctl(netns, key, value string) error {
	out, err := exec.Command("ip", "netns", "exec", netns, "sysctl", "-q", "-w", key+"="+value).CombinedOutput()
	if err != nil {
		return fmt.Errorf("livetcp: %s: sysctl %s=%s: %v: %s", netns, key, value, err, out)
	}
	return nil
}

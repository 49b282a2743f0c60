// Package nstat reads a network namespace's kernel TCP/IP counters with
// nstat(8). It asks for absolute values (-a), leaves nstat's history
// file alone (-s) and prints zeros too (-z), so that two readings
// subtract and every counter asked for is in the output.
package nstat

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// Read runs nstat inside netns (ip netns exec) for the named counters.
func Read(ctx context.Context, netns string, names ...string) (map[string]uint64, error) {
	args := append([]string{"netns", "exec", netns, "nstat", "-asz"}, names...)
	cmd := exec.CommandContext(ctx, "ip", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("nstat in %s: %w: %s", netns, err, bytes.TrimSpace(stderr.Bytes()))
	}
	m, err := Parse(out, names)
	if err != nil {
		return nil, fmt.Errorf("nstat in %s: %w", netns, err)
	}
	return m, nil
}

// Parse reads nstat's "name value rate" lines (the "#kernel" header is
// skipped); every one of names must be there.
func Parse(out []byte, names []string) (map[string]uint64, error) {
	m := map[string]uint64{}
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || strings.HasPrefix(f[0], "#") {
			continue
		}
		v, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("line %q: %w", l, err)
		}
		m[f[0]] = v
	}
	for _, n := range names {
		if _, ok := m[n]; !ok {
			return nil, fmt.Errorf("no %s in %q", n, out)
		}
	}
	return m, nil
}

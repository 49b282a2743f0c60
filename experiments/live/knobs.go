package live

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/pseudocong/pseudocong/internal/nstat"
	"github.com/pseudocong/pseudocong/testbed"
)

// Sysctl is one sysctl key (dotted, "net.ipv4.tcp_frto") and its value.
type Sysctl struct {
	Key, Value string
}

func (s Sysctl) String() string { return s.Key + "=" + s.Value }

// netnsExec runs a command inside a named namespace.
func netnsExec(ctx context.Context, netns string, args ...string) ([]byte, error) {
	out, err := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", netns}, args...)...).CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("%s: %s: %w: %s", netns, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return out, nil
}

// setSysctls sets each sysctl inside netns (the namespace's own copy:
// net.ipv4.tcp_* are per network namespace) and returns the function that
// puts the old values back, in reverse order. A key the kernel lacks is
// an error that names it. On error everything set so far is restored.
func setSysctls(ctx context.Context, netns string, set []Sysctl) (restore func() error, err error) {
	var undo []Sysctl
	restore = func() error {
		var errs []error
		for i := len(undo) - 1; i >= 0; i-- {
			// A fresh context: the restore must run after a cancellation too.
			if _, err := netnsExec(context.Background(), netns, "sysctl", "-q", "-w", undo[i].String()); err != nil {
				errs = append(errs, err)
			}
		}
		undo = nil
		return errors.Join(errs...)
	}
	for _, s := range set {
		old, err := netnsExec(ctx, netns, "sysctl", "-n", s.Key)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("sysctl %s (does this kernel have it?): %w", s.Key, err), restore())
		}
		if _, err := netnsExec(ctx, netns, "sysctl", "-q", "-w", s.String()); err != nil {
			return nil, errors.Join(err, restore())
		}
		undo = append(undo, Sysctl{s.Key, strings.TrimSpace(string(old))})
	}
	return restore, nil
}

// setRouteRTOMin gives host h's connected route (its /N subnet, where the
// other hosts live) a per-route rto_min (`ip route change ... rto_min`)
// and returns the function that changes it back to a route without one.
// Linux clamps every data RTO of a connection on that route to at least
// it (instead of net.ipv4.tcp_rto_min_us, 200 ms); it does not touch the
// SYN timer (1 s).
func setRouteRTOMin(ctx context.Context, h testbed.Host, d time.Duration) (restore func() error, err error) {
	if d <= 0 || d%time.Millisecond != 0 {
		return nil, fmt.Errorf("per-route rto_min %v: want a positive whole number of milliseconds (ip route's unit)", d)
	}
	route := []string{"route", "change", h.Addr.Masked().String(), "dev", h.Iface,
		"proto", "kernel", "scope", "link", "src", h.Addr.Addr().String()}
	ms := strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	if _, err := netnsExec(ctx, h.Netns, append(append([]string{"ip"}, route...), "rto_min", ms)...); err != nil {
		return nil, fmt.Errorf("per-route rto_min %v: %w", d, err)
	}
	return func() error {
		_, err := netnsExec(context.Background(), h.Netns, append([]string{"ip"}, route...)...)
		return err
	}, nil
}

// NstatCounters are the kernel TCP counters a kernel run reads in each
// host namespace (nstat names). Per namespace, so only the run's own
// connections count.
var NstatCounters = []string{
	"TcpActiveOpens", "TcpPassiveOpens", "TcpRetransSegs",
	"TcpExtTCPSynRetrans", "TcpExtTCPTimeouts", "TcpExtTCPSpuriousRTOs",
	"TcpExtTCPLossProbes", "TcpExtTCPLossUndo",
}

// readNstat reads NstatCounters' absolute values inside netns, as
// floats for the summaries they go to.
func readNstat(ctx context.Context, netns string) (map[string]float64, error) {
	c, err := nstat.Read(ctx, netns, NstatCounters...)
	if err != nil {
		return nil, err
	}
	m := make(map[string]float64, len(c))
	for k, v := range c {
		m[k] = float64(v)
	}
	return m, nil
}

// sub is after − before per counter.
func sub(after, before map[string]float64) map[string]float64 {
	d := make(map[string]float64, len(after))
	for k, v := range after {
		d[k] = v - before[k]
	}
	return d
}

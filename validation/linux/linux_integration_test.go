//go:build integration

package linux

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/testenv"
)

// The CI cells: one flow at 10 Mbit/s, 20 ms, one BDP of queue (17
// packets), 7 s each. Longer runs (20 s, both flow counts, four
// settings) are the compare tool's: go run ./validation/linux/compare.
var ciSetting = Setting{Rate: 10e6, RTT: 20 * time.Millisecond}

const ciDuration = 7 * time.Second

// retransFactor bounds ours against Linux's retransmissions where they
// are compared (reno against Linux through the kernel's tbf). Over 10
// runs of this test here Linux's counts spread over 42–69 against ours'
// 58, ratios 0.84–1.38 (docs/tcp-validation.md, "Against Linux"), so a
// factor of 2.5 either way fails a real difference, not that noise. The
// issue's ±15 % is logged beside it.
//
// CUBIC's retransmissions are logged, not bounded: in a 7-s run they are
// set by the window at which HyStart ends slow start, and live that
// follows the delay line's wall-clock jitter (a late timer is a delay
// sample). Over 32 runs here (20 idle, 12 with both cores busy) Linux's
// exit came at cwnd 49–51 in 28 (25–29 retransmissions), at 43 in 3 (53)
// and at 28 in one (10, the count of the CI run that failed at a ratio
// of 3.5); ours exits at 56 (35). Linux's recoveries were 9–11 in every
// run, ours 10; reno's 13 in 12 of 12, ours 12. The recoveries, the loss
// episodes that set the window, are what both loss-based cells hold to
// Linux (RecoveriesAgree).
const retransFactor = 2.5

// TestSerialLinuxDumbbell runs kernel TCP through the live dumbbell and
// our simulator on the same cell and holds ours to Linux:
//
//   - BBR through our switch: flow goodput within the issue's ±15 %.
//   - Reno and CUBIC against Linux through the kernel's tbf (the anchor:
//     the same path with the kernel's shaper as the bottleneck): goodput
//     and fast recoveries within ±15 % (recoveries: or one apart), and
//     reno's retransmissions within retransFactor (±15 % logged).
//   - Reno through our switch: goodput within ±15 % too. (Before the
//     egress shaper kept what late wake-ups owe a backlogged line, Linux's
//     loss-based flows got about 80 % of the link through it here, against
//     95 % through the kernel's tbf: docs/tcp-validation.md.)
//
// BBR's retransmissions are logged: Linux's are several times ours (a
// known miss, docs/tcp-validation.md).
func TestSerialLinuxDumbbell(t *testing.T) {
	if testing.Short() {
		t.Skip("live iperf3 runs: not in -short")
	}
	testenv.RequireRoot(t)
	testenv.RequireCommand(t, "ip", "ping", "iperf3", "nstat", "ss", "tc", "chrt")
	bin := testenv.BuildPseudocong(t)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cell := func(cc string) Cell {
		return Grid([]string{cc}, []int{1}, []Setting{ciSetting}, ciDuration)[0]
	}
	ours := map[string]Side{}
	for _, cc := range []string{"reno", "cubic", "bbr"} {
		s, err := Sim(cell(cc), 1)
		if err != nil {
			t.Fatal(err)
		}
		ours[cc] = s
	}
	run := func(l *Live, cc string) Side {
		t.Helper()
		s, err := l.Run(t.Context(), cell(cc))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	sw := &Live{Binary: bin, RTPriority: 10, Log: log}
	t.Cleanup(func() {
		if err := sw.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	swReno, swBBR := run(sw, "reno"), run(sw, "bbr")
	if err := sw.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	kern := &Live{Binary: bin, RTPriority: 10, KernelShaper: true, Log: log}
	t.Cleanup(func() {
		if err := kern.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	kReno, kCubic := run(kern, "reno"), run(kern, "cubic")

	report := func(what string, o, l Side) {
		hy := ""
		if l.HyStartCwnd > 0 {
			hy = fmt.Sprintf(", Linux's HyStart exit at cwnd %.0f", l.HyStartCwnd)
		}
		t.Logf("%s: goodput ours %.2f / Linux %.2f Mbit/s (%.3f), retrans ours %d / Linux %d (%s), recoveries ours %d / Linux %d, drops ours %d / Linux %d%s, ±15 %%: %v",
			what, o.Goodput0, l.Goodput0, Ratio(o.Goodput0, l.Goodput0), o.Retrans, l.Retrans,
			ratioStr(Ratio(float64(o.Retrans), float64(l.Retrans))), o.Recoveries, l.Recoveries, o.Drops, l.Drops, hy,
			verdict(misses(o, l, Tolerance)))
	}
	report("bbr through our switch", ours["bbr"], swBBR)
	report("reno through our switch", ours["reno"], swReno)
	report("reno through the kernel's tbf", ours["reno"], kReno)
	report("cubic through the kernel's tbf", ours["cubic"], kCubic)

	goodput := func(what string, o, l Side) {
		t.Helper()
		if !Within(o.Goodput0, l.Goodput0, Tolerance) {
			t.Errorf("%s: goodput ours %.2f vs Linux %.2f Mbit/s: ratio %.3f, outside ±15 %%", what, o.Goodput0, l.Goodput0, Ratio(o.Goodput0, l.Goodput0))
		}
	}
	goodput("bbr through our switch", ours["bbr"], swBBR)
	goodput("reno through our switch", ours["reno"], swReno)
	goodput("reno through the kernel's tbf", ours["reno"], kReno)
	goodput("cubic through the kernel's tbf", ours["cubic"], kCubic)
	for _, x := range []struct {
		what string
		o, l Side
	}{{"reno through the kernel's tbf", ours["reno"], kReno}, {"cubic through the kernel's tbf", ours["cubic"], kCubic}} {
		if !RecoveriesAgree(x.o.Recoveries, x.l.Recoveries, Tolerance) {
			t.Errorf("%s: recoveries ours %d vs Linux %d: outside ±15 %% and more than one apart", x.what, x.o.Recoveries, x.l.Recoveries)
		}
	}
	o, l := ours["reno"], kReno
	r := Ratio(float64(o.Retrans), float64(l.Retrans))
	small := o.Retrans <= SmallRetrans && l.Retrans <= SmallRetrans
	if !small && !(r >= 1/retransFactor && r <= retransFactor) {
		t.Errorf("reno through the kernel's tbf: retransmissions ours %d vs Linux %d: ratio %s, outside a factor %.1f", o.Retrans, l.Retrans, ratioStr(r), retransFactor)
	}
}

func verdict(m []string) string {
	if len(m) == 0 {
		return "ok"
	}
	return "miss " + strings.Join(m, ", ")
}

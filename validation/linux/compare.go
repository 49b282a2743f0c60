package linux

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// Tolerance is the agreement bound: ours within ±15 % of Linux.
const Tolerance = 0.15

// SmallRetrans is the count below which two retransmission counts agree
// whatever their ratio (both at most this many): a ratio of tiny counts
// says nothing (the ns-3 table's rule, with its threshold of 10).
const SmallRetrans = 10

// Row is a cell measured on both sides.
type Row struct {
	Cell        Cell
	Ours, Linux Side
	// Anchor, if measured, is Linux again with the kernel's tbf as the
	// bottleneck instead of our switch's shaper (Live.KernelShaper).
	Anchor *Side
}

// Ratio is ours / Linux (NaN when Linux's is 0 and ours is not; 1 when
// both are 0).
func Ratio(ours, linux float64) float64 {
	switch {
	case linux == 0 && ours == 0:
		return 1
	case linux == 0:
		return math.NaN()
	}
	return ours / linux
}

// Within reports ours within ±tol of Linux.
func Within(ours, linux, tol float64) bool {
	r := Ratio(ours, linux)
	return !math.IsNaN(r) && math.Abs(r-1) <= tol+1e-12
}

// RetransAgree is the retransmission verdict: within ±tol, or both at
// most SmallRetrans.
func RetransAgree(ours, linux uint64, tol float64) bool {
	return (ours <= SmallRetrans && linux <= SmallRetrans) || Within(float64(ours), float64(linux), tol)
}

// RecoveriesAgree is the loss-episode verdict: within ±tol, or at most
// one apart (a 7-s cell has about ten; one more or less is the count's
// grain, not a difference).
func RecoveriesAgree(ours, linux uint64, tol float64) bool {
	return max(ours, linux)-min(ours, linux) <= 1 || Within(float64(ours), float64(linux), tol)
}

// Misses names the measures outside ±tol: "goodput0", "aggregate",
// "retrans".
func (r Row) Misses(tol float64) []string { return misses(r.Ours, r.Linux, tol) }

// AnchorMisses is Misses against the anchor (nil without one).
func (r Row) AnchorMisses(tol float64) []string {
	if r.Anchor == nil {
		return nil
	}
	return misses(r.Ours, *r.Anchor, tol)
}

func misses(ours, linux Side, tol float64) []string {
	var m []string
	if !Within(ours.Goodput0, linux.Goodput0, tol) {
		m = append(m, "goodput0")
	}
	if !Within(ours.Aggregate, linux.Aggregate, tol) {
		m = append(m, "aggregate")
	}
	if !RetransAgree(ours.Retrans, linux.Retrans, tol) {
		m = append(m, "retrans")
	}
	return m
}

// Clues are the facts beside a miss that point at its cause: the
// bottleneck's drops on both sides (more retransmissions than drops are
// spurious or repeated ones), the loss episodes (recoveries) and where
// Linux's HyStart ended slow start (the retransmissions of a short CUBIC
// run follow that window: docs/tcp-validation.md), our RTO expiries
// (Linux repairs most tail losses with RACK/TLP, which our sender
// lacks), the flows' split.
func (r Row) Clues() string {
	var c []string
	c = append(c, fmt.Sprintf("drops ours %d / Linux %d", r.Ours.Drops, r.Linux.Drops))
	c = append(c, fmt.Sprintf("recoveries ours %d / Linux %d", r.Ours.Recoveries, r.Linux.Recoveries))
	if r.Linux.HyStartCwnd > 0 {
		c = append(c, fmt.Sprintf("Linux's HyStart ended slow start at cwnd %.0f", r.Linux.HyStartCwnd))
	}
	if r.Ours.Retrans > r.Ours.Drops+SmallRetrans {
		c = append(c, fmt.Sprintf("ours retransmits %d more than it lost", r.Ours.Retrans-r.Ours.Drops))
	}
	if r.Linux.Retrans > r.Linux.Drops+SmallRetrans {
		c = append(c, fmt.Sprintf("Linux retransmits %d more than the switch dropped", r.Linux.Retrans-r.Linux.Drops))
	}
	if r.Ours.Timeouts > 0 {
		c = append(c, fmt.Sprintf("our RTOs %d", r.Ours.Timeouts))
	}
	if len(r.Ours.Streams) > 1 {
		c = append(c, fmt.Sprintf("split ours %s / Linux %s", mbits(r.Ours.Streams), mbits(r.Linux.Streams)))
	}
	if u := r.Linux.Aggregate * 1e6 / float64(r.Cell.Rate); u < 0.85 {
		c = append(c, fmt.Sprintf("Linux at %.0f %% of the link", u*100))
	}
	if a := r.Anchor; a != nil {
		c = append(c, fmt.Sprintf("Linux through the kernel's tbf %.2f Mbit/s, %d retransmissions (%d drops)", a.Aggregate, a.Retrans, a.Drops))
		if len(r.AnchorMisses(Tolerance)) == 0 {
			c = append(c, "ours agrees with that on every measure")
		}
	}
	return strings.Join(c, "; ")
}

func mbits(x []float64) string {
	s := make([]string, len(x))
	for i, v := range x {
		s[i] = fmt.Sprintf("%.2f", v)
	}
	return strings.Join(s, "+")
}

func ratioStr(r float64) string {
	if math.IsNaN(r) {
		return "—"
	}
	return fmt.Sprintf("%.2f", r)
}

// WriteTable writes the rows as a Markdown table (ours | Linux | ratio
// for flow 0's goodput, the aggregate goodput and the retransmissions;
// the verdict at ±tol), then every miss with its clues.
func WriteTable(w io.Writer, rows []Row, tol float64) {
	anchored := false
	for _, r := range rows {
		anchored = anchored || r.Anchor != nil
	}
	head := "| cell | goodput₀ ours / Linux (Mbit/s) | ratio | aggregate ours / Linux (Mbit/s) | ratio | retrans ours / Linux | ratio | drops ours / Linux | verdict |"
	rule := "|---|---|---|---|---|---|---|---|---|"
	if anchored {
		head += " Linux via kernel tbf: aggregate (Mbit/s), retrans | ours ÷ that | verdict vs that |"
		rule += "---|---|---|"
	}
	fmt.Fprintln(w, head)
	fmt.Fprintln(w, rule)
	in, inAnchor := 0, 0
	for _, r := range rows {
		m := r.Misses(tol)
		v := "ok"
		if len(m) > 0 {
			v = "miss: " + strings.Join(m, ", ")
		} else {
			in++
		}
		fmt.Fprintf(w, "| %s | %.2f / %.2f | %s | %.2f / %.2f | %s | %d / %d | %s | %d / %d | %s |", r.Cell.Key(),
			r.Ours.Goodput0, r.Linux.Goodput0, ratioStr(Ratio(r.Ours.Goodput0, r.Linux.Goodput0)),
			r.Ours.Aggregate, r.Linux.Aggregate, ratioStr(Ratio(r.Ours.Aggregate, r.Linux.Aggregate)),
			r.Ours.Retrans, r.Linux.Retrans, ratioStr(Ratio(float64(r.Ours.Retrans), float64(r.Linux.Retrans))),
			r.Ours.Drops, r.Linux.Drops, v)
		if anchored {
			if a := r.Anchor; a != nil {
				av := "ok"
				if m := r.AnchorMisses(tol); len(m) > 0 {
					av = "miss: " + strings.Join(m, ", ")
				} else {
					inAnchor++
				}
				fmt.Fprintf(w, " %.2f, %d | %s, %s | %s |", a.Aggregate, a.Retrans,
					ratioStr(Ratio(r.Ours.Aggregate, a.Aggregate)), ratioStr(Ratio(float64(r.Ours.Retrans), float64(a.Retrans))), av)
			} else {
				fmt.Fprint(w, " — | — | — |")
			}
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\n%d of %d cells within ±%.0f %% of Linux through our switch on every measure", in, len(rows), tol*100)
	if anchored {
		fmt.Fprintf(w, "; %d within ±%.0f %% of Linux through the kernel's tbf", inAnchor, tol*100)
	}
	fmt.Fprintln(w, ".")
	var miss []Row
	for _, r := range rows {
		if len(r.Misses(tol)) > 0 {
			miss = append(miss, r)
		}
	}
	if len(miss) == 0 {
		return
	}
	fmt.Fprintln(w, "\nMisses, with the facts that point at the cause:")
	fmt.Fprintln(w)
	for _, r := range miss {
		fmt.Fprintf(w, "* %s (%s): %s\n", r.Cell.Key(), strings.Join(r.Misses(tol), ", "), r.Clues())
	}
}

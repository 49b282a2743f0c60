// Command tcamlayouts measures every TCAM layout from an empty table to a
// full one, for ascending, descending, constant and random priorities and
// for overlapping and disjoint rule sets: moves per insert by occupancy,
// insert latency (chip cycles and driver time under the tcam.timing of a
// profile, pica8-p3297 by default), the layout's background work, refused
// inserts and the TCAM space lost. It writes a Markdown report and a plot
// of moves per insert against occupancy.
//
//	go run ./tools/tcamlayouts                      # docs/tcam-layouts.md + .png
//	go run ./tools/tcamlayouts -slots 4000 -out /tmp/x.md
//
// The numbers are counts and modelled times, not wall-clock measurements,
// so they are exact and repeatable; main_test.go checks the claims the
// report makes on a smaller table.
package main

import (
	"flag"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/pseudocong/pseudocong/profile"
	"github.com/pseudocong/pseudocong/tcam"
)

func main() {
	fs := flag.NewFlagSet("tcamlayouts", flag.ContinueOnError)
	slots := fs.Int("slots", 1000, "TCAM slots")
	prof := fs.String("profile", "pica8-p3297", "profile whose tcam.timing prices the operations")
	out := fs.String("out", "docs/tcam-layouts.md", "report path (the plot goes next to it as .png; empty: no plot)")
	noPlot := fs.Bool("no-plot", false, "do not draw the plot")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if *slots < 10 {
		fmt.Fprintln(os.Stderr, "tcamlayouts: -slots must be at least 10")
		os.Exit(2)
	}
	if err := run(*slots, *prof, *out, !*noPlot); err != nil {
		fmt.Fprintln(os.Stderr, "tcamlayouts:", err)
		os.Exit(1)
	}
}

func run(slots int, profName, out string, withPlot bool) error {
	p, err := profile.Load(profName)
	if err != nil {
		return err
	}
	timing := p.TCAM.Timing
	var results []result
	for _, name := range tcam.LayoutNames() {
		for _, set := range ruleSets {
			for _, pat := range patterns {
				r, err := measure(name, set, pat, slots, timing)
				if err != nil {
					return err
				}
				results = append(results, r)
			}
		}
	}
	var b strings.Builder
	writeReport(&b, results, slots, p.Name)
	if withPlot {
		png := strings.TrimSuffix(out, filepath.Ext(out)) + ".png"
		if err := drawPlot(results, slots, png); err != nil {
			return err
		}
		fmt.Fprintf(&b, "\n![moves per insert against occupancy, overlapping rules, ascending priorities](%s)\n", filepath.Base(png))
	}
	return os.WriteFile(out, []byte(b.String()), 0o644)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()*1e3) }

func writeReport(b *strings.Builder, results []result, slots int, prof string) {
	fmt.Fprintf(b, `# TCAM layouts: moves and insert latency from empty to full

Written by `+"`go run ./tools/tcamlayouts -slots %d`"+` (do not edit by hand). Every
layout of package tcam fills an empty %d-slot TCAM to capacity, one insert
at a time, for four priority patterns and two rule sets. Latency is the
modelled chip plus driver time of each insert under the tcam.timing of the
%s profile (its driver slow path near a full table included), so the
numbers are exact and repeatable, not wall-clock.

* **overlapping**: even rules match one source address, odd ones one
  destination address, so every source rule overlaps every destination
  rule; **disjoint**: exact 5-tuples, as paper 000's per-flow rules.
* moves/insert is the mean over inserts made while the table was 0–50 %%,
  50–90 %% and 90–100 %% full; background is the deferred work (hermes's
  migration into the main slice, run whenever its shadow is half full) per
  insert, not part of the insert latency; refused counts inserts a layout
  turned down with slots free (the dependency-graph layouts'
  ErrNoPlacement); space lost is the share of slots that never held an
  entry once the TCAM was full (hermes's reserved shadow).

| layout | rules | priorities | moves/insert 0–50 %% | 50–90 %% | 90–100 %% | max moves | mean insert (ms) | max insert (ms) | background moves/insert | background (ms/insert) | refused | space lost |
| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
`, slots, slots, prof)
	defer b.WriteString(reading)
	for _, r := range results {
		fmt.Fprintf(b, "| %s | %s | %s | %.2f | %.2f | %.2f | %d | %s | %s | %.2f | %s | %d | %.1f %% |\n",
			r.Layout, r.Rules, r.Pattern, r.BandMoves[0], r.BandMoves[1], r.BandMoves[2], r.MaxMoves,
			ms(r.MeanLatency), ms(r.MaxLatency), r.BackgroundMovesPerInsert, ms(r.BackgroundTime), r.Refused, 100*r.SpaceLost)
	}
}

// reading is the report's commentary; TestReportClaims checks each claim
// on a smaller table, so it holds whatever -slots is.
const reading = `
## Reading the table

* **highest-first** (paper 000's Broadcom layout) pays N(N−1)/2 moves for
  N ascending inserts whatever the rules, and nothing for descending or
  constant ones; **lowest-first** is its mirror.
* **gap-k** makes strictly fewer moves than highest-first on ascending
  inserts, for both rule sets, at the price of moves on descending and
  constant ones (its free slots have to be kept) and of rare large
  rebalances: each moved entry's old slot is invalidated, and on the Pica8
  an invalidate costs as much driver time as a new write, so a rebalance of
  most of the table near full is the largest single insert of any layout.
  Past the occupancy at which no window has one free slot per k entries it
  shifts like highest-first.
* **ruletris** and **fastrule** never do worse than highest-first on
  ascending inserts and make no move at all when rules are disjoint (the
  paper's per-flow exact-match rules): only overlapping rules constrain
  the order. On the overlapping set every new source rule must precede
  every older destination rule and vice versa (with ascending priorities),
  so rules pack against each other from the middle of the empty table
  without a move until that side is full, and after that the dependency
  chain runs through the whole table: the minimum chain is as long as
  highest-first's shift. Minimum per insert is not minimum over a run,
  and keeps no free slots for later. With random priorities only part of
  the table is in the way. FastRule's greedy chain equals RuleTris's minimum on
  these structured sets; the brute-force test (tcam/bruteforce_test.go)
  shows where it is longer.
* **hermes** keeps every insert under 5 ms with 5 % of the slots reserved,
  for ascending, descending and constant priorities and for random ones on
  disjoint rules; the migration into the main slice still costs what a
  highest-first insert costs, only later (the background columns). On
  overlapping rules with random priorities many new rules are outranked by
  a main-slice rule they overlap. Such a rule goes into the shadow cut
  into pieces that leave those main rules out (Hermes's rule splitting)
  when that is priced below inserting it into the main slice now; but a
  source rule cut around a destination rule takes 32 pieces (one per
  address bit), so with more than about three such rules the split exceeds its cap
  (half the shadow) and the rule still goes to the main slice at once,
  after the shadow rules it outranks have migrated. Splitting cuts the
  worst insert there, not the mean; there Hermes still gives no
  guarantee, and the pieces cost shadow room and later migration work
  (the background columns).
`

func drawPlot(results []result, slots int, path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("moves per insert, overlapping rules, ascending priorities (%d slots)", slots)
	p.X.Label.Text = "occupancy before the insert (entries)"
	p.Y.Label.Text = "moves (mean of 20 inserts)"
	colors := []color.RGBA{{0, 0, 0, 255}, {200, 0, 0, 255}, {0, 120, 0, 255}, {0, 0, 200, 255}, {200, 120, 0, 255}, {120, 0, 160, 255}}
	k := 0
	for _, r := range results {
		if r.Rules != "overlapping" || r.Pattern != "ascending" {
			continue
		}
		var pts plotter.XYs
		const w = 20
		for i := 0; i+w <= len(r.Curve); i += w {
			s := int64(0)
			for _, m := range r.Curve[i : i+w] {
				s += m
			}
			pts = append(pts, plotter.XY{X: float64(i), Y: float64(s) / w})
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		line.Color = colors[k%len(colors)]
		line.Width = vg.Points(1.2)
		p.Add(line)
		p.Legend.Add(r.Layout, line)
		k++
	}
	p.Legend.Top = true
	p.Legend.Left = true
	return p.Save(7*vg.Inch, 4.2*vg.Inch, path)
}

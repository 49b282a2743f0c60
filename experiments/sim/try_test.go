package sim

import (
	"testing"
	"time"
	"slices"

	"github.com/pseudocong/pseudocong/probes"
	"github.com/pseudocong/pseudocong/profile"
)

func TestTry(t *testing.T) {
	prof, err := profile.Load("pica8-p3297")
	if err != nil { t.Fatal(err) }
	run := func(k Kind, n int, rate float64, L int, prio string) *Outcome {
		t0 := time.Now()
		o, err := Run(Scenario{Kind: k, Flows: n, Rate: rate, BaseLoad: L, Priority: prio, Profile: prof,
			ControllerService: 1950 * time.Microsecond, LinkLatency: time.Microsecond, Timers: probes.Berkeley(), Seed: 1})
		if err != nil { t.Fatal(err) }
		var mx, sum time.Duration; d := 0
		var ds []time.Duration
		for i, x := range o.Delays { if o.Delivered[i] { d++; sum += x; mx = max(mx, x); ds = append(ds, x) } }
		var ct time.Duration
		for _, c := range o.ControllerTimes { ct += c }
		slices.Sort(ds)
		bins := probes.Classify(ds, probes.Bins(probes.Berkeley(), probes.KindSYN))
		gt15 := 0
		for _, x := range ds { if x >= 1500*time.Millisecond { gt15++ } }
		t.Logf("%s n=%d rate=%g L=%d %s: delivered %d mean %v max %v ctrl %v bins %.3f gt1.5 %.3f events %d wall %v", k, n, rate, L, prio, d, sum/time.Duration(max(d,1)), mx, ct/time.Duration(max(1,len(o.ControllerTimes))), bins, float64(gt15)/float64(n), o.Events, time.Since(t0))
		return o
	}
	for _, r := range []float64{10, 100, 1000, 5000} { run(OneWay, 400, r, 0, "constant") }
	for _, p := range []string{"ascending", "descending", "constant"} { run(OneWay, 4000, 10, 0, p) }
	for _, L := range []int{500, 2000, 3500} { for _, r := range []float64{10, 100, 1000, 5000} { run(Handshake, 250, r, L, "ascending") } }
	for _, L := range []int{2500, 3500} { for _, r := range []float64{10, 100, 1000, 5000} { run(Data, 250, r, L, "ascending") } }
}

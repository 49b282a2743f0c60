package sim

import (
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/probes"
	"github.com/pseudocong/pseudocong/profile"
)

func envDur(k string, d time.Duration) time.Duration {
	if v := os.Getenv(k); v != "" {
		x, _ := time.ParseDuration(v)
		return x
	}
	return d
}
func envInt(k string, d int) int {
	if v := os.Getenv(k); v != "" {
		x, _ := strconv.Atoi(v)
		return x
	}
	return d
}

func TestTry(t *testing.T) {
	prof, err := profile.Load("pica8-p3297")
	if err != nil {
		t.Fatal(err)
	}
	prof.Agent.FlushPeriod = envDur("FLUSH", prof.Agent.FlushPeriod)
	prof.TCAM.Timing.DriverPerMove = envDur("CMOVE", prof.TCAM.Timing.DriverPerMove)
	run := func(k Kind, n int, rate float64, L int, prio string) *Outcome {
		o, err := Run(Scenario{Kind: k, Flows: n, Rate: rate, BaseLoad: L, Priority: prio, Profile: prof,
			ControllerService: 1950 * time.Microsecond, LinkLatency: time.Microsecond, Timers: probes.Berkeley(), Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		var mx, sum time.Duration
		d := 0
		var ds []time.Duration
		for i, x := range o.Delays {
			if o.Delivered[i] {
				d++
				sum += x
				mx = max(mx, x)
				ds = append(ds, x)
			}
		}
		var ct time.Duration
		for _, c := range o.ControllerTimes {
			ct += c
		}
		slices.Sort(ds)
		bins := probes.Classify(ds, probes.Bins(probes.Berkeley(), probes.KindSYN))
		gt15 := 0
		for _, x := range ds {
			if x >= 1500*time.Millisecond {
				gt15++
			}
		}
		t.Logf("%s n=%d rate=%g L=%d %s: deliv %d mean %.3f max %.3f ctrl %.4f bins %.3f gt1.5 %.3f", k, n, rate, L, prio, d, (sum / time.Duration(max(d, 1))).Seconds(), mx.Seconds(), (ct / time.Duration(max(1, len(o.ControllerTimes)))).Seconds(), bins, float64(gt15)/float64(n))
		return o
	}
	if os.Getenv("ONLY") == "" || os.Getenv("ONLY") == "t1" {
		for _, r := range []float64{10, 100, 1000, 5000} {
			run(OneWay, 400, r, 0, "constant")
		}
		for _, p := range []string{"ascending", "descending", "constant"} {
			run(OneWay, 4000, 10, 0, p)
		}
	}
	for _, L := range []int{500, 2000, 3500} {
		for _, r := range []float64{10, 5000} {
			run(Handshake, 250, r, L, "ascending")
		}
	}
	for _, L := range []int{2500, 3500} {
		for _, r := range []float64{10, 5000} {
			run(Data, 250, r, L, "ascending")
		}
	}
}

package vccgrid

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestSpecFileParses(t *testing.T) {
	s, err := Load("vcc")
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	keys := map[string]bool{}
	for _, c := range s.Cells() {
		n[c.Exp]++
		if keys[c.Key()] {
			t.Errorf("cell %s twice", c.Key())
		}
		keys[c.Key()] = true
	}
	// (a) five mixes (and the same at the extra RTT), (b) one, (c) three
	// RED minima, (d) five algorithms at two rates.
	if n["a"] != 10 || n["b"] != 1 || n["c"] != 3 || n["d"] != 10 {
		t.Fatalf("cells per experiment %v", n)
	}
	for _, k := range []string{"a.n2", "a.n18", "b.access20-100", "c.min20kb", "d.vegas.r100"} {
		if !keys[k] {
			t.Errorf("no cell %s", k)
		}
	}
	r := s.Reduce()
	if len(r.Cells()) >= len(s.Cells()) || r.Reduced != nil || r.Duration >= s.Duration {
		t.Fatalf("reduced grid: %d cells, %v", len(r.Cells()), r.Duration)
	}
}

func TestSpecErrors(t *testing.T) {
	for _, c := range []struct{ from, to, want string }{
		{"seeds: 2", "seeds: 0", "seeds"},
		{"warmup: 5s", "warmup: 40s", "warmup"},
		{"react: rtt", "react: often", "react"},
		{"nonecn: [2, 5, 10, 15, 18]", "nonecn: [20]", "nonecn 20"},
		{"cc: [reno, bic, highspeed, vegas, yeah]", "cc: [reno, nope]", "nope"},
		{"min_kb: [20, 50, 100]", "min_kb: [1]", "min_kb"},
		{"access_mbps: [20, 100]", "access_mbps: [0]", "access_mbps"},
		{"red: \"red,", "red: \"bogus,", "bogus"},
		{"seed: 1", "seed: 1\nextra: 1", "extra"},
	} {
		b := string(builtin)
		if !strings.Contains(b, c.from) {
			t.Fatalf("spec has no %q", c.from)
		}
		_, err := Parse([]byte(strings.Replace(b, c.from, c.to, 1)), "bad")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q → %q: error %v, want one naming %q", c.from, c.to, err, c.want)
		}
	}
	if _, err := Load("nope"); err == nil {
		t.Error("Load(nope): no error")
	}
}

// A short run with vCC: the translator rewrites frames (SYNs, data marked
// ECT(0), ACKs with ECE hidden and windows lowered), and every rewritten
// frame's IPv4 and TCP checksums verify; without vCC nothing is rewritten.
func TestRewrittenFramesChecksums(t *testing.T) {
	fl := []FlowConfig{{CC: "reno", ECN: true}, {CC: "reno"}, {CC: "reno", ECN: true}, {CC: "bic"}}
	cfg := RunConfig{Flows: fl, Bottleneck: 20e6, RTT: 10 * time.Millisecond,
		Qdisc:    "red,limit=400000,min=30000,max=90000,probability=0.02,avpkt=1000,bandwidth=20mbit,ecn,seed=3",
		Duration: 3 * time.Second, Warmup: time.Second, Seed: 3, Verify: true}
	off, err := RunDumbbell(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if off.Rewritten != 0 || off.VCC.TranslatedSYNs != 0 {
		t.Fatalf("without vCC: %d frames rewritten", off.Rewritten)
	}
	cfg.VCC = true
	on, err := RunDumbbell(cfg)
	if err != nil {
		t.Fatal(err)
	}
	st := on.VCC
	if on.BadChecksums != 0 {
		t.Fatalf("%d of %d rewritten frames with bad checksums", on.BadChecksums, on.Rewritten)
	}
	if st.TranslatedSYNs < 2 || st.StrippedSYNACKs < 2 || st.ECTMarked == 0 || st.ECEHidden == 0 || st.Reductions == 0 || st.WindowRewrites == 0 {
		t.Fatalf("translator did not work on the sim's frames: %+v", st)
	}
	if on.Rewritten < st.ECTMarked {
		t.Fatalf("%d frames rewritten, fewer than the %d marked ECT", on.Rewritten, st.ECTMarked)
	}
	if st.PassThrough["ecn_tenant"] < 2 {
		t.Fatalf("the ECN senders' flows were not passed through: %+v", st.PassThrough)
	}
	for _, f := range on.Flows {
		if f.Mbps <= 0 {
			t.Fatalf("a flow moved nothing: %+v", on.Flows)
		}
	}
}

// The grid's result depends on the seeds, not on how many runs go in
// parallel.
func TestGridWorkersDeterministic(t *testing.T) {
	s, err := Load("vcc")
	if err != nil {
		t.Fatal(err)
	}
	s.Duration, s.Warmup, s.Seeds = 2*time.Second, time.Second, 2
	s.A.Senders, s.A.NonECN, s.A.ExtraRTT, s.A.RateMbps = 4, []int{2}, 0, 20
	s.C.MinKB, s.D.CC, s.D.RatesMbps = s.C.MinKB[:1], []string{"bic"}, []float64{20}
	s.B.RateMbps = 20
	var vals [2]map[string]float64
	for i, w := range []int{1, 3} {
		r, err := Run(context.Background(), s, w)
		if err != nil {
			t.Fatal(err)
		}
		vals[i] = r.Values()
	}
	if len(vals[0]) == 0 || !reflect.DeepEqual(vals[0], vals[1]) {
		t.Fatalf("1 worker: %v\n3 workers: %v", vals[0], vals[1])
	}
}
